// Host-only training smoke checks: a few optimizer steps of the small models on a few hundred
// synthetic samples lower the loss, and chip-numerics training is deterministic.
#include <bit>

#include <gtest/gtest.h>

#include "common/splitmix64.h"
#include "graph/host_trainer.h"

namespace tessera::graph {
namespace {

// 10 classes of 28x28 images: class c lights a 6x6 block at a class-specific place, plus noise.
struct Synthetic {
  std::vector<float> images;
  std::vector<int32_t> labels;
};

Synthetic synthetic(int n, uint64_t seed) {
  SplitMix64 rng(seed);
  Synthetic s{std::vector<float>(static_cast<size_t>(n) * 784), std::vector<int32_t>(n)};
  for (int i = 0; i < n; ++i) {
    const int c = static_cast<int>(rng.below(10));
    s.labels[i] = c;
    float* img = s.images.data() + static_cast<size_t>(i) * 784;
    for (int p = 0; p < 784; ++p) img[p] = static_cast<float>(0.3 * rng.unit());
    const int r0 = 2 + (c / 5) * 12, c0 = 2 + (c % 5) * 5;
    for (int r = r0; r < r0 + 6; ++r)
      for (int q = c0; q < c0 + 4; ++q) img[r * 28 + q] = 1.0f;
  }
  return s;
}

// Mean loss over the first 128 samples.
double mean_loss(HostTrainer& t, const Synthetic& d, int batch) {
  EvalResult r;
  for (int b = 0; b + batch <= 128; b += batch)  // the first 128 samples (trained on)
    t.evaluate(d.images.data() + static_cast<size_t>(b) * 784, d.labels.data() + b, batch, r);
  return r.loss_sum / r.samples;
}

void expect_training_lowers_loss(const char* model, Numerics mode, OptimizerKind opt, double lr,
                                 int steps) {
  const Synthetic d = synthetic(256, 5);
  const int batch = 32;
  HostTrainer t(zoo_spec(model), batch, mode, OptimizerConfig{opt, lr}, 0);
  const double before = mean_loss(t, d, batch);
  for (int s = 0; s < steps; ++s) {
    const int b = (s * batch) % 256;
    t.step(d.images.data() + static_cast<size_t>(b) * 784, d.labels.data() + b, batch);
  }
  const double after = mean_loss(t, d, batch);
  EXPECT_LT(after, 0.7 * before) << model << " " << numerics_name(mode) << ": " << before << " -> "
                                 << after;
}

TEST(TrainingSmoke, MlpAdamLowersTheLoss) {
  expect_training_lowers_loss("mlp", Numerics::kF32, OptimizerKind::kAdam, 1e-3, 16);
}
TEST(TrainingSmoke, MlpSgdMomentumLowersTheLoss) {
  expect_training_lowers_loss("mlp", Numerics::kF32, OptimizerKind::kSgd, 0.1, 16);
}
TEST(TrainingSmoke, SmallCnnAdamLowersTheLoss) {
  expect_training_lowers_loss("cnn_small", Numerics::kF32, OptimizerKind::kAdam, 3e-3, 16);
}
TEST(TrainingSmoke, MlpChipNumericsLowersTheLoss) {
  expect_training_lowers_loss("mlp", Numerics::kChip, OptimizerKind::kAdam, 1e-3, 16);
}

TEST(TrainingSmoke, ChipNumericsTrainingIsBitReproducibleIncludingAPartialBatch) {
  const Synthetic d = synthetic(44, 9);
  auto train = [&] {
    HostTrainer t(zoo_spec("cnn_small"), 16, Numerics::kChip, OptimizerConfig{}, 7);
    t.step(d.images.data(), d.labels.data(), 16);
    t.step(d.images.data() + 16 * 784, d.labels.data() + 16, 16);
    t.step(d.images.data() + 32 * 784, d.labels.data() + 32, 12);  // last partial batch
    return t.params();
  };
  const auto a = train(), b = train();
  ASSERT_EQ(a.size(), b.size());
  for (size_t p = 0; p < a.size(); ++p)
    for (size_t i = 0; i < a[p].size(); ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(a[p][i]), std::bit_cast<uint32_t>(b[p][i]));
}

}  // namespace
}  // namespace tessera::graph
