// cnn_small trained on the timed core (conv2d, max-pool, reshape and their gradients lowered by
// the compiler) is bit-identical to the host reference in chip numerics.
#include <algorithm>
#include <cstring>

#include <gtest/gtest.h>

#include "chip_test_data.h"
#include "common/splitmix64.h"
#include "core/spec.h"
#include "graph/host_trainer.h"
#include "runtime/train_chip.h"

namespace tessera::runtime {
namespace {

// The default config. configs/small.json cannot run cnn_small: its 8 lanes cannot hold the 10
// classes of a softmax row, its 2 sublanes differ from the host reference's 8-sublane column sums
// (bias gradients), and its 4,096-bundle instruction memory holds no convolutional step.
core::CoreSpec default_config() {
  return chip_test::tpu_v2_like();
}

using chip_test::differing_words;
using chip_test::synthetic_samples;

void check_exact(graph::OptimizerKind kind, double lr, int steps, int batch) {
  const graph::ModelSpec cnn = graph::zoo_spec("cnn_small");
  graph::OptimizerConfig opt;
  opt.kind = kind;
  opt.lr = lr;
  ChipTrainerOptions o;
  o.batch = batch;
  o.optimizer = opt;
  ChipTrainer chip(cnn, default_config(), o);
  graph::HostTrainer host(cnn, batch, graph::Numerics::kChip, opt, 0);
  std::vector<float> images;
  std::vector<int32_t> labels;
  for (int s = 0; s < steps; ++s) {
    synthetic_samples(batch, 300 + static_cast<uint64_t>(s), images, labels);
    const float lc = chip.step(images.data(), labels.data(), batch);
    const float lh = host.step(images.data(), labels.data(), batch);
    ASSERT_EQ(std::memcmp(&lc, &lh, 4), 0)
        << "loss of step " << s << ": chip " << lc << " host " << lh;
  }
  EXPECT_EQ(differing_words(chip.params(), host.params()), 0u);
  EXPECT_EQ(differing_words(chip.optimizer_state(), host.optimizer().state()), 0u);
  // The weights moved: the comparison is not between two untouched initialisations.
  graph::HostTrainer init(cnn, batch, graph::Numerics::kChip, opt, 0);
  EXPECT_GT(differing_words(chip.params(), init.params()), 0u);
}

TEST(ChipTrainerCnn, CnnSmallSgdWeightsAfter20StepsAreBitIdenticalToTheChipNumericsReference) {
  check_exact(graph::OptimizerKind::kSgd, 0.05, 20, 3);
}

TEST(ChipTrainerCnn, CnnSmallAdamWeightsAfter20StepsAreBitIdenticalToTheChipNumericsReference) {
  check_exact(graph::OptimizerKind::kAdam, 1e-3, 20, 3);
}

TEST(ChipTrainerCnn, CnnSmallEvaluationOnTheChipMatchesTheReference) {
  const graph::ModelSpec cnn = graph::zoo_spec("cnn_small");
  ChipTrainerOptions o;
  o.batch = 3;
  ChipTrainer chip(cnn, default_config(), o);
  graph::HostTrainer host(cnn, 3, graph::Numerics::kChip, o.optimizer, 0);
  std::vector<float> images;
  std::vector<int32_t> labels;
  synthetic_samples(5, 9, images, labels);
  graph::EvalResult a, b;
  chip.evaluate(images.data(), labels.data(), 5, a);
  host.evaluate(images.data(), labels.data(), 5, b);
  EXPECT_EQ(a.correct, b.correct);
  EXPECT_EQ(a.samples, 5);
  EXPECT_EQ(a.loss_sum, b.loss_sum);
}

}  // namespace
}  // namespace tessera::runtime
