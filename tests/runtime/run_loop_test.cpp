// The run loop (runtime/run_loop.h) over a trainer that is neither the single-chip nor the
// data-parallel one: the host reference (runtime/host_run.h) behind the Trainer interface. The
// loop alone gives it epochs, checkpoints, resume and the report: an interrupted and resumed run
// ends bit-identical to an uninterrupted one, and checkpoints of another kind are refused.
#include "runtime/run_loop.h"

#include <filesystem>
#include <memory>

#include <gtest/gtest.h>

#include "chip_test_data.h"
#include "runtime/host_run.h"
#include "runtime/training_run.h"
#include "support/error_of.h"
#include "support/temp_dir.h"

namespace tessera::runtime {
namespace {

using tessera::testing::error_of;
using tessera::testing::TempDir;

struct Data {
  Dataset train = chip_test::synthetic_dataset("synthetic", 36, 1);  // batch 8: 4 + 1 steps
  Dataset test = chip_test::synthetic_dataset("synthetic-test", 12, 2);
};

const Data& data() {
  static const Data d;
  return d;
}

RunOptions run_options(const std::string& dir) {
  RunOptions o;
  o.model_name = "mlp";
  o.model = graph::zoo_spec("mlp");
  o.config = load_run_config(std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json");
  o.epochs = 2;
  o.checkpoint_dir = dir;
  return o;
}

ChipTrainerOptions trainer_options() {
  ChipTrainerOptions t;
  t.batch = 8;
  t.optimizer.kind = graph::OptimizerKind::kAdam;
  return t;
}

std::unique_ptr<RunLoop> host_run(const RunOptions& o) {
  return std::make_unique<RunLoop>(data().train, data().test, o, [&o] {
    return std::make_unique<HostRunTrainer>(o.model, trainer_options(), graph::Numerics::kF32,
                                            /*use_blas=*/false);
  });
}

// Parameters and the report without wall time.
std::pair<Tensors, std::string> outcome_of(const RunLoop& r) {
  nlohmann::ordered_json report = r.report();
  report.erase("resumed_from");
  for (auto& e : report["epochs"]) e.erase("host_seconds");
  return {r.trainer().parameters(), report.dump()};
}

TEST(RunLoop, ThirdTrainerResumesMidEpochBitIdentically) {
  const std::unique_ptr<RunLoop> full = host_run(run_options(""));
  ASSERT_TRUE(full->run());
  const auto expected = outcome_of(*full);
  EXPECT_EQ(full->report()["epochs"].size(), 2u);
  EXPECT_EQ(full->trainer().steps(), 10);

  TempDir dir;
  RunOptions o = run_options(dir.str());
  o.checkpoint_every = 3;
  {
    const std::unique_ptr<RunLoop> first = host_run(o);
    TrainingCallbacks cb;
    cb.keep_going = [](int64_t step) { return step < 7; };
    EXPECT_FALSE(first->run(cb));
  }
  o.resume = true;
  const std::unique_ptr<RunLoop> second = host_run(o);
  EXPECT_EQ(std::filesystem::path(second->resumed_from()).filename(), "ckpt-0000000006.tsck");
  ASSERT_TRUE(second->run());
  const auto got = outcome_of(*second);
  EXPECT_EQ(chip_test::differing_words(got.first, expected.first), 0u);
  EXPECT_EQ(got.second, expected.second);
}

TEST(RunLoop, CheckpointOfAnotherKindOfRunIsRefused_bad) {
  TempDir dir;
  RunOptions o = run_options(dir.str());
  o.epochs = 1;
  ASSERT_TRUE(host_run(o)->run());
  TrainingRunOptions chip;
  static_cast<RunOptions&>(chip) = o;
  chip.trainer = trainer_options();
  chip.resume = true;
  EXPECT_EQ(error_of([&] { TrainingRun r(data().train, data().test, chip); }),
            dir.file("ckpt-0000000005.tsck") + ": was written by a \"host\" run");
}

}  // namespace
}  // namespace tessera::runtime
