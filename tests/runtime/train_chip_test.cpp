#include "runtime/train_chip.h"

#include <cstring>

#include <gtest/gtest.h>

#include "chip_test_data.h"
#include "common/splitmix64.h"
#include "core/spec.h"
#include "graph/host_trainer.h"

namespace tessera::runtime {
namespace {

core::CoreSpec default_config() {
  return chip_test::tpu_v2_like();
}

void expect_bit_identical(const std::vector<std::vector<float>>& a,
                          const std::vector<std::vector<float>>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].size(), b[i].size());
    size_t diff = 0;
    for (size_t j = 0; j < a[i].size(); ++j) diff += std::memcmp(&a[i][j], &b[i][j], 4) != 0;
    EXPECT_EQ(diff, 0u) << "parameter " << i;
  }
}

void check_exact(graph::OptimizerKind kind, double lr, int steps, int batch) {
  const graph::ModelSpec mlp = graph::zoo_spec("mlp");
  graph::OptimizerConfig opt;
  opt.kind = kind;
  opt.lr = lr;
  ChipTrainerOptions o;
  o.batch = batch;
  o.optimizer = opt;
  o.seed = 0;
  ChipTrainer chip(mlp, default_config(), o);
  graph::HostTrainer host(mlp, batch, graph::Numerics::kChip, opt, 0);
  expect_bit_identical(chip.params(), host.params());
  for (int s = 0; s < steps; ++s) {
    const chip_test::SampleBatch d =
        chip_test::synthetic_batch(batch, 100 + static_cast<uint64_t>(s));
    const float lc = chip.step(d.images.data(), d.labels.data(), batch);
    const float lh = host.step(d.images.data(), d.labels.data(), batch);
    ASSERT_EQ(std::memcmp(&lc, &lh, 4), 0)
        << "loss of step " << s << ": chip " << lc << " host " << lh;
  }
  expect_bit_identical(chip.params(), host.params());
  expect_bit_identical(chip.optimizer_state(), host.optimizer().state());
}

TEST(ChipTrainer, MlpSgdWeightsAfter20StepsAreBitIdenticalToTheChipNumericsReference) {
  check_exact(graph::OptimizerKind::kSgd, 0.05, 1, 8);
  check_exact(graph::OptimizerKind::kSgd, 0.05, 20, 8);
}

TEST(ChipTrainer, MlpAdamWeightsAfter20StepsAreBitIdenticalToTheChipNumericsReference) {
  check_exact(graph::OptimizerKind::kAdam, 1e-3, 20, 8);
}

TEST(ChipTrainer, EvaluationOnTheChipMatchesTheReference) {
  const graph::ModelSpec mlp = graph::zoo_spec("mlp");
  ChipTrainerOptions o;
  o.batch = 8;
  ChipTrainer chip(mlp, default_config(), o);
  graph::HostTrainer host(mlp, 8, graph::Numerics::kChip, o.optimizer, 0);
  const chip_test::SampleBatch d = chip_test::synthetic_batch(12, 7);
  graph::EvalResult a, b;
  chip.evaluate(d.images.data(), d.labels.data(), 12, a);
  host.evaluate(d.images.data(), d.labels.data(), 12, b);
  EXPECT_EQ(a.correct, b.correct);
  EXPECT_EQ(a.samples, 12);
  EXPECT_EQ(a.loss_sum, b.loss_sum);
}

}  // namespace
}  // namespace tessera::runtime
