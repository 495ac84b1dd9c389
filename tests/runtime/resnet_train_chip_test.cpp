// The zoo's ResNet-18 (width 4, Fashion-MNIST-shaped images zero-padded to 32 x 32) trained on
// the timed core: losses and batch normalisation's running averages bit-identical to the host
// reference in chip numerics, losses within a bf16 tolerance of the host in fp32; evaluation reads
// the running averages; a run resumed from a checkpoint gets them back.
#include <algorithm>
#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "chip_test_data.h"
#include "graph/host_trainer.h"
#include "runtime/host_run.h"
#include "runtime/resnet_train_model.h"
#include "runtime/run_config.h"
#include "runtime/train_chip.h"
#include "runtime/training_run.h"
#include "support/temp_dir.h"

namespace tessera::runtime {
namespace {

graph::ResNetSpec small_resnet18() {
  return {.depth = 18, .classes = 10, .image = 32, .width = 4, .channels = 1, .input = 28};
}

ChipTrainerOptions sgd(int batch, double lr = 0.05) {
  ChipTrainerOptions o;
  o.batch = batch;
  o.optimizer.kind = graph::OptimizerKind::kSgd;
  o.optimizer.lr = lr;
  return o;
}

// The chip and the host reference (`numerics`) trained side by side on the same synthetic
// batches, then evaluated on the same samples.
struct SideBySide {
  SideBySide(uint64_t seed, const ChipTrainerOptions& o, graph::Numerics numerics)
      : model(resnet_train_model(small_resnet18(), seed)),
        chip(model, chip_test::tpu_v2_like(), o),
        host(host_trainer(model, o.batch, numerics, o.optimizer, 0, true)) {
    host.keep_state(model.initial_state, model.build_eval);
  }
  // One step on n samples drawn from `seed`: {chip loss, host loss}.
  std::pair<float, float> step(int n, uint64_t seed) {
    chip_test::synthetic_samples(n, seed, images, labels);
    const float lc = chip.step(images.data(), labels.data(), n);
    return {lc, host.step(images.data(), labels.data(), n)};
  }
  void evaluate(int n, uint64_t seed, graph::EvalResult& a, graph::EvalResult& b) {
    chip_test::synthetic_samples(n, seed, images, labels);
    chip.evaluate(images.data(), labels.data(), n, a);
    host.evaluate(images.data(), labels.data(), n, b);
  }

  TrainModel model;
  ChipTrainer chip;
  graph::HostTrainer host;
  std::vector<float> images;
  std::vector<int32_t> labels;
};

TEST(ResNetOnChip, TheModelTakesFashionMnistImagesAndKeepsEveryRunningAverage) {
  const TrainModel t = resnet_train_model(small_resnet18(), 0);
  EXPECT_EQ(t.name(), "resnet18");
  EXPECT_EQ(t.spec.input, (graph::Shape{28, 28, 1}));
  const graph::Model m = t.build(2);
  EXPECT_EQ(m.state.size(), 2 * 20u);  // 20 batch norms
  EXPECT_EQ(t.initial_state.size(), m.state.size());
  EXPECT_EQ(t.initial.size(), m.params.size());
  EXPECT_EQ(t.build_eval(2).state.size(), m.state.size());
}

TEST(ResNetOnChip, TwoStepsAndEvaluationAreBitIdenticalToTheChipNumericsReference) {
  SideBySide r(0, sgd(2), graph::Numerics::kChip);
  for (int s = 0; s < 2; ++s) {
    const auto [lc, lh] = r.step(2, 40 + static_cast<uint64_t>(s));
    ASSERT_EQ(std::memcmp(&lc, &lh, 4), 0)
        << "loss of step " << s << ": chip " << lc << " host " << lh;
  }
  EXPECT_EQ(chip_test::differing_words(r.chip.model_state(), r.host.state()), 0u);
  EXPECT_EQ(chip_test::differing_words(r.chip.params(), r.host.params()), 0u);
  EXPECT_GT(chip_test::differing_words(r.chip.model_state(), r.model.initial_state), 0u);
  graph::EvalResult a, b;
  r.evaluate(3, 7, a, b);
  EXPECT_EQ(a.samples, 3);
  EXPECT_EQ(a.correct, b.correct);
  EXPECT_EQ(a.loss_sum, b.loss_sum);
}

// The chip (bf16 MXU inputs) against the host in fp32, three steps at a small learning rate then
// an evaluation: losses within 5% (the forward pass alone differs by 1-2%: bf16 rounding through
// 17 convolutions, normalised by batch statistics over as few as 4 rows in the last stage).
TEST(ResNetOnChip, ThreeStepsAgreeWithTheFp32HostWithinBf16Tolerance) {
  SideBySide r(1, sgd(4, 1e-4), graph::Numerics::kF32);
  for (int s = 0; s < 3; ++s) {
    const auto [lc, lh] = r.step(4, 50 + static_cast<uint64_t>(s));
    EXPECT_NEAR(lc, lh, 0.05 * lh) << "step " << s;
  }
  graph::EvalResult a, b;
  r.evaluate(8, 9, a, b);
  EXPECT_NEAR(a.loss_sum, b.loss_sum, 0.05 * b.loss_sum);
}

struct Trained {
  std::vector<std::vector<float>> params, state;
  nlohmann::ordered_json epochs;
};

// One epoch of 3 steps of 4 samples; with `dir`, a checkpoint after every step, stopped after
// step 2 and finished by a new run resumed from it.
Trained train_epoch(const std::string& dir) {
  static const Dataset train = chip_test::synthetic_dataset("synthetic", 12, 1);
  static const Dataset test = chip_test::synthetic_dataset("synthetic-test", 4, 2);
  TrainingRunOptions o;
  o.model_name = "resnet18";
  o.model = resnet_train_model(small_resnet18(), 0);
  o.config = load_run_config(std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json");
  o.trainer = sgd(4);
  o.epochs = 1;
  o.checkpoint_dir = dir;
  o.checkpoint_every = dir.empty() ? 0 : 1;
  if (!dir.empty()) {
    TrainingRun first(train, test, o);
    TrainingCallbacks cb;
    cb.keep_going = [](int64_t step) { return step < 2; };
    EXPECT_FALSE(first.run(cb));
    o.resume = true;
  }
  TrainingRun r(train, test, o);
  EXPECT_TRUE(r.run());
  Trained out{r.trainer().params(), r.trainer().model_state(), r.report()["epochs"]};
  for (auto& e : out.epochs) e.erase("host_seconds");
  return out;
}

TEST(ResNetOnChip, ResumingFromACheckpointRestoresTheRunningAverages) {
  const Trained whole = train_epoch("");
  const testing::TempDir dir;
  const Trained resumed = train_epoch(dir.str());
  EXPECT_EQ(chip_test::differing_words(resumed.params, whole.params), 0u);
  EXPECT_EQ(chip_test::differing_words(resumed.state, whole.state), 0u);
  EXPECT_EQ(resumed.epochs.dump(), whole.epochs.dump());
}

}  // namespace
}  // namespace tessera::runtime
