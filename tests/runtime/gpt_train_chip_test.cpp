// The gpt decoder trained on the simulated chip through the run loop (runtime/training_run.h) on
// byte windows of a text (a tiny model: d 32, 2 heads, 1 block, context 16, batch 4, Adam on the
// Adam unit): 20 steps bit-identical to the same run on the host reference in chip numerics
// (runtime/host_run.h): the loss of every step, every weight and all optimizer state; the
// validation loss of both equal too; an interrupted and resumed run ends bit-identical to an
// uninterrupted one; the checkpoint identity names the gpt sizes, and a checkpoint of another model
// is refused.
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "chip_test_data.h"
#include "gpt_test_data.h"
#include "runtime/host_run.h"
#include "runtime/training_run.h"
#include "support/error_of.h"
#include "support/temp_dir.h"

namespace tessera::runtime {
namespace {

using tessera::testing::error_of;
using tessera::testing::TempDir;

using gpt_test::data;
using gpt_test::kTiny;
using gpt_test::same_bits;

TrainingRunOptions options(const std::string& dir, int64_t steps) {
  TrainingRunOptions o = gpt_test::options(4, steps);
  o.checkpoint_dir = dir;
  return o;
}

TEST(GptTrainChip, TwentyStepsThroughTheRunLoopAreBitIdenticalToTheHostChipNumerics) {
  const TrainingRunOptions o = options("", 20);
  TrainingRun chip(data().train, data().test, o);
  ASSERT_TRUE(chip.run());
  HostRun host(data().train, data().test, chip_test::host_chip_numerics(o));
  ASSERT_TRUE(host.run());

  const nlohmann::ordered_json c = chip.report()["epochs"][0], r = host.report()["epochs"][0];
  ASSERT_EQ(c["per_step"]["loss"].size(), 20u);
  ASSERT_EQ(r["per_step"]["loss"].size(), 20u);
  for (size_t s = 0; s < 20; ++s) {
    const float lc = static_cast<float>(c["per_step"]["loss"][s].get<double>());
    const float lh = static_cast<float>(r["per_step"]["loss"][s].get<double>());
    EXPECT_TRUE(same_bits(lc, lh)) << "step " << s << ": chip " << lc << " host " << lh;
  }
  EXPECT_EQ(c["test_loss"], r["test_loss"]);
  EXPECT_EQ(c["test_accuracy"], r["test_accuracy"]);
  EXPECT_LT(c["per_step"]["loss"][19].get<double>(), c["per_step"]["loss"][0].get<double>() - 1);

  const auto& host_trainer = static_cast<const HostRunTrainer&>(host.RunLoop::trainer());
  EXPECT_EQ(chip_test::differing_words(chip.trainer().params(), host_trainer.parameters()), 0u);
  EXPECT_EQ(
      chip_test::differing_words(chip.trainer().optimizer_state(), host_trainer.optimizer_state()),
      0u);
  EXPECT_EQ(chip.trainer().steps(), 20);

  // The report: tokens per simulated second and the MXU split between attention and dense layers.
  EXPECT_DOUBLE_EQ(c["tokens_per_sim_second"].get<double>(),
                   c["samples_per_sim_second"].get<double>() * kTiny.context);
  const nlohmann::ordered_json& split = c["mxu_split"];
  EXPECT_GT(split["attention"]["busy_cycles"].get<int64_t>(), 0);
  EXPECT_GT(split["dense"]["busy_cycles"].get<int64_t>(), 0);
  EXPECT_FALSE(split.contains("conv"));
  EXPECT_EQ(c["pe"]["other"]["pushes"], 0);  // every MXU kernel is attributed
}

// Parameters, optimizer state and the report without wall time.
std::string outcome_of(const TrainingRun& r) {
  nlohmann::ordered_json report = r.report();
  report.erase("resumed_from");
  for (auto& e : report["epochs"]) e.erase("host_seconds");
  return report.dump();
}

TEST(GptTrainChip, ResumedRunEqualsTheUninterruptedRun) {
  TrainingRun full(data().train, data().test, options("", 8));
  ASSERT_TRUE(full.run());

  TempDir dir;
  TrainingRunOptions o = options(dir.str(), 8);
  o.checkpoint_every = 3;
  const std::unique_ptr<TrainingRun> second =
      gpt_test::interrupted_and_resumed<TrainingRun>(o, 5, "ckpt-0000000003.tsck");
  ASSERT_TRUE(second->run());
  EXPECT_EQ(chip_test::differing_words(second->trainer().params(), full.trainer().params()), 0u);
  EXPECT_EQ(chip_test::differing_words(second->trainer().optimizer_state(),
                                       full.trainer().optimizer_state()),
            0u);
  EXPECT_EQ(outcome_of(*second), outcome_of(full));
}

TEST(GptTrainChip, TextDatasetsTakeGptOnlyAndImageDatasetsNot_bad) {
  TrainingRunOptions o = options("", 1);
  o.model = graph::zoo_spec("mlp");
  o.model_name = "mlp";
  EXPECT_EQ(error_of([&] { TrainingRun r(data().train, data().test, o); }),
            "dataset 'text/train': a text dataset, but model 'mlp' takes images");
  const Dataset images = chip_test::synthetic_dataset("synthetic", 4, 1);
  EXPECT_EQ(error_of([&] { TrainingRun r(images, images, options("", 1)); }),
            "dataset 'synthetic': an image dataset, but model 'gpt' takes text");
}

}  // namespace
}  // namespace tessera::runtime
