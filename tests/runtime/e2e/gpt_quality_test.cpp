// gpt, the default recipe (d 128, 4 heads, 2 blocks, context 64; batch 32, Adam lr 1e-3, seed 0,
// 2,000 steps) on the fortunes corpus, on the simulated chip with the built-in default config: the
// validation loss (mean cross-entropy over the first 256 non-overlapping windows of the validation
// stream) reaches <= 1.88 nats per byte and is within 0.02 of the same run on the host reference
// executor in fp32 (runtime/host_run.h).
#include <cmath>
#include <filesystem>

#include <gtest/gtest.h>

#include "runtime/fortunes.h"
#include "runtime/host_run.h"
#include "runtime/run_config.h"
#include "runtime/training_run.h"

namespace tessera::runtime {
namespace {

TEST(GptQuality, DefaultRecipeReachesValidationLossOf188WithinTwoHundredthsOfTheHostFp32Run) {
  if (!std::filesystem::exists(kFortunesDir)) GTEST_SKIP() << "fortunes not installed";
  const graph::GptSpec recipe;
  const TextCorpus corpus = load_fortunes();
  const Dataset train = fortunes_dataset(corpus, Split::kTrain, recipe.context);
  const Dataset validation = fortunes_dataset(corpus, Split::kTest, recipe.context);
  TrainingRunOptions o;
  o.model_name = "gpt";
  o.model = TrainModel(recipe);
  o.config = load_run_config("");
  o.trainer.batch = 32;
  o.trainer.seed = 0;
  o.trainer.optimizer.kind = graph::OptimizerKind::kAdam;
  o.trainer.optimizer.lr = 1e-3;
  o.epochs = 1;
  o.steps_limit = 2000;
  TrainingRun chip(train, validation, o);
  chip.run();
  HostRunOptions h;
  static_cast<RunOptions&>(h) = o;
  h.trainer = o.trainer;
  HostRun host(train, validation, h);
  host.run();
  const double chip_loss = chip.report()["epochs"][0]["test_loss"].get<double>();
  const double host_loss = host.report()["epochs"][0]["test_loss"].get<double>();
  RecordProperty("chip_validation_loss", std::to_string(chip_loss));
  RecordProperty("host_fp32_validation_loss", std::to_string(host_loss));
  EXPECT_LE(chip_loss, 1.88);
  EXPECT_LE(std::abs(chip_loss - host_loss), 0.02);
}

}  // namespace
}  // namespace tessera::runtime
