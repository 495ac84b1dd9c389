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
#include "common/splitmix64.h"
#include "runtime/host_run.h"
#include "runtime/training_run.h"
#include "support/error_of.h"
#include "support/temp_dir.h"

namespace tessera::runtime {
namespace {

using tessera::testing::error_of;
using tessera::testing::TempDir;

constexpr graph::GptSpec kTiny{.d_model = 32, .heads = 2, .layers = 1, .context = 16};

// Text with some structure to learn: words of a small alphabet from SplitMix64(seed).
std::string synthetic_text(int64_t bytes, uint64_t seed) {
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

struct Data {
  Dataset train =
      text_dataset("text/train", "", synthetic_text(4000, 1), kTiny.context, 4000 - kTiny.context);
  Dataset test = text_dataset("text/validation", "", synthetic_text(200, 2), kTiny.context, 8);
};

const Data& data() {
  static const Data d;
  return d;
}

TrainingRunOptions options(const std::string& dir, int64_t steps) {
  TrainingRunOptions o;
  o.model_name = "gpt";
  o.model = TrainModel(kTiny);
  o.config = load_run_config(std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json");
  o.epochs = 1;
  o.steps_limit = steps;
  o.checkpoint_dir = dir;
  o.trainer.batch = 4;
  o.trainer.optimizer.kind = graph::OptimizerKind::kAdam;
  o.trainer.optimizer.lr = 1e-2;
  o.trainer.seed = 7;
  return o;
}

template <class T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

TEST(GptTrainChip, TwentyStepsThroughTheRunLoopAreBitIdenticalToTheHostChipNumerics) {
  const TrainingRunOptions o = options("", 20);
  TrainingRun chip(data().train, data().test, o);
  ASSERT_TRUE(chip.run());
  HostRunOptions h;
  static_cast<RunOptions&>(h) = o;
  h.trainer = o.trainer;
  h.numerics = graph::Numerics::kChip;
  h.use_blas = false;
  HostRun host(data().train, data().test, h);
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
  {
    TrainingRun first(data().train, data().test, o);
    EXPECT_EQ(first.identity()["model"], "gpt");
    EXPECT_EQ(first.identity()["gpt"].dump(),
              R"({"d_model":32,"heads":2,"layers":1,"context":16})");
    TrainingCallbacks cb;
    cb.keep_going = [](int64_t step) { return step < 5; };
    EXPECT_FALSE(first.run(cb));
  }
  o.resume = true;
  TrainingRun second(data().train, data().test, o);
  EXPECT_EQ(std::filesystem::path(second.resumed_from()).filename(), "ckpt-0000000003.tsck");
  ASSERT_TRUE(second.run());
  EXPECT_EQ(chip_test::differing_words(second.trainer().params(), full.trainer().params()), 0u);
  EXPECT_EQ(chip_test::differing_words(second.trainer().optimizer_state(),
                                       full.trainer().optimizer_state()),
            0u);
  EXPECT_EQ(outcome_of(second), outcome_of(full));

  // A gpt of other sizes does not resume from it.
  TrainingRunOptions wider = o;
  wider.model = TrainModel(graph::GptSpec{.d_model = 64, .heads = 2, .layers = 1, .context = 16});
  EXPECT_NE(error_of([&] {
              TrainingRun r(data().train, data().test, wider);
            }).find("checkpoint is for gpt {\"d_model\":32"),
            std::string::npos);
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
