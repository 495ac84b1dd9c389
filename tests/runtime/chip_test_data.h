// Shared by the runtime tests that train on the simulated chip and compare with the host
// reference: the config they run on, Fashion-MNIST-shaped synthetic samples, synthetic text, and a
// bitwise comparison of tensor lists.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/splitmix64.h"
#include "core/spec.h"
#include "runtime/dataset.h"
#include "runtime/host_run.h"
#include "runtime/training_run.h"
#include "system/system_spec.h"

namespace tessera::runtime::chip_test {

// A data-parallel machine: `chips` chips of `cores_per_chip` cores on one board, a ring (a line
// for 2 chips), default links with the given loss rate.
inline system::SystemSpec machine(int chips, int cores_per_chip, double loss_rate) {
  system::SystemSpec s;
  s.chips = chips;
  s.chips_per_board = chips;
  s.cores_per_chip = cores_per_chip;
  s.topology = chips > 2 ? system::Topology::kRing : system::Topology::kLine;
  s.loss_rate = loss_rate;
  return s;
}

inline core::CoreSpec tpu_v2_like() {
  return core::load_core_spec(std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json");
}

// n samples of 28 x 28 from SplitMix64(seed): each pixel k/255 for k drawn from [0, 400), values
// k >= 255 becoming exact zeros (about 36%); then n labels in [0, 10).
inline void synthetic_samples(int64_t n, uint64_t seed, std::vector<float>& images,
                              std::vector<int32_t>& labels) {
  SplitMix64 rng(seed);
  images.assign(static_cast<size_t>(n) * 784, 0.0f);
  for (float& p : images) {
    const uint64_t r = rng.next() % 400;
    p = r < 255 ? static_cast<float>(r) / 255.0f : 0.0f;
  }
  labels.clear();
  for (int64_t i = 0; i < n; ++i) labels.push_back(static_cast<int32_t>(rng.next() % 10));
}

// A Fashion-MNIST-shaped dataset (28 x 28, 10 classes) of n synthetic_samples.
inline Dataset synthetic_dataset(const std::string& name, int64_t n, uint64_t seed) {
  Dataset d;
  d.name = name;
  d.count = n;
  d.rows = d.cols = 28;
  d.classes = 10;
  synthetic_samples(n, seed, d.images, d.labels);
  return d;
}

// A batch of synthetic_samples.
struct SampleBatch {
  std::vector<float> images;
  std::vector<int32_t> labels;
};
inline SampleBatch synthetic_batch(int64_t n, uint64_t seed) {
  SampleBatch b;
  synthetic_samples(n, seed, b.images, b.labels);
  return b;
}

// Text with some structure to learn: words of a small alphabet from SplitMix64(seed).
inline std::string synthetic_text(int64_t bytes, uint64_t seed) {
  SplitMix64 rng(seed);
  std::string s;
  while (static_cast<int64_t>(s.size()) < bytes) {
    const int letters = 1 + static_cast<int>(rng.below(7));
    for (int i = 0; i < letters; ++i) s += static_cast<char>('a' + rng.below(6));
    s += rng.below(5) == 0 ? '\n' : ' ';
  }
  s.resize(static_cast<size_t>(bytes));
  return s;
}

// Words whose bits differ between two lists of tensors (shape mismatches fail the test).
// The host reference of a chip run's options: the same run in chip numerics without BLAS, whose
// losses, weights and optimizer state a chip run must equal bit for bit.
inline HostRunOptions host_chip_numerics(const TrainingRunOptions& o) {
  HostRunOptions h;
  static_cast<RunOptions&>(h) = o;
  h.trainer = o.trainer;
  h.numerics = graph::Numerics::kChip;
  h.use_blas = false;
  return h;
}

inline size_t differing_words(const std::vector<std::vector<float>>& a,
                              const std::vector<std::vector<float>>& b) {
  EXPECT_EQ(a.size(), b.size());
  size_t diff = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    EXPECT_EQ(a[i].size(), b[i].size());
    for (size_t j = 0; j < a[i].size() && j < b[i].size(); ++j)
      diff += std::memcmp(&a[i][j], &b[i][j], 4) != 0;
  }
  return diff;
}

}  // namespace tessera::runtime::chip_test
