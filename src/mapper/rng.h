// Rng: the mapper's values drawn from the common SplitMix64 stream (common/splitmix64.h), computed
// by this code, not by the standard library's distributions, so results are bit-identical on every
// platform and standard library. The seed is spread (seed * 0x9e3779b97f4a7c15 +
// 0x632be59bd9b4e019) before it becomes the stream's state.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "common/splitmix64.h"

namespace tessera::mapper {

class Rng {
 public:
  explicit Rng(uint64_t seed) : m_stream(seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL) {}

  uint64_t next() { return m_stream.next(); }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return m_stream.unit53(); }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Integer in [0, n) as next() % n (slightly biased for large n; kept for reproducible results);
  // n > 0.
  int below(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }
  // Standard normal (Box-Muller, one value per call).
  double normal() {
    double u1 = 1.0 - uniform();
    double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  template <typename T>
  void shuffle(std::vector<T>& v) {
    for (int i = static_cast<int>(v.size()) - 1; i > 0; --i) std::swap(v[i], v[below(i + 1)]);
  }

 private:
  SplitMix64 m_stream;
};

}  // namespace tessera::mapper
