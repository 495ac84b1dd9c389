// Shared helpers for the Adam unit tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/spec.h"

namespace tessera::adam_test {

inline std::vector<float> random_vector(std::mt19937& rng, int64_t n, float scale) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

// A core config with a small Adam unit: blocks of `block` elements, data cache of `dcache` bytes.
inline core::CoreSpec small_spec(int64_t block = 64, int64_t dcache = 1 << 20) {
  core::CoreSpec s;
  s.adam.block_elements = block;
  s.adam.dcache_bytes = dcache;
  s.hbm_bytes = 64ll << 20;
  return s;
}

}  // namespace tessera::adam_test
