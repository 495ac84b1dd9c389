// The run loop (runtime/run_loop.h) over a trainer that is neither the single-chip nor the
// data-parallel one: the host reference (graph::HostTrainer) behind the Trainer interface. The
// loop alone gives it epochs, checkpoints, resume and the report: an interrupted and resumed run
// ends bit-identical to an uninterrupted one, and checkpoints of another kind are refused.
#include "runtime/run_loop.h"

#include <filesystem>
#include <memory>

#include <gtest/gtest.h>

#include "chip_test_data.h"
#include "graph/host_trainer.h"
#include "runtime/training_run.h"
#include "support/error_of.h"
#include "support/temp_dir.h"

namespace tessera::runtime {
namespace {

using tessera::testing::error_of;
using tessera::testing::TempDir;

// Training on the host in fp32: the whole machine is a graph::HostTrainer.
class HostRunTrainer final : public Trainer {
 public:
  HostRunTrainer(const graph::ModelSpec& model, const ChipTrainerOptions& options)
      : m_options(options),
        m_host(model, options.batch, graph::Numerics::kF32, options.optimizer, options.seed,
               /*use_blas=*/false) {}

  const ChipTrainerOptions& options() const override { return m_options; }
  int64_t steps() const override { return m_host.optimizer().steps(); }
  std::optional<double> step(const Batch& b) override {
    return m_host.step(b.images.data(), b.labels.data(), b.size);
  }
  void evaluate(const Batch& b, graph::EvalResult& acc) override {
    m_host.evaluate(b.images.data(), b.labels.data(), b.size, acc);
  }
  Tensors parameters() const override { return m_host.params(); }
  void start_epoch() override {}
  nlohmann::ordered_json epoch_report(const EpochResult& e) override {
    nlohmann::ordered_json j;
    j["epoch"] = e.epoch + 1;
    j["steps"] = e.steps;
    j["samples"] = e.samples;
    put_quality(j, e);
    j["host_seconds"] = e.wall_seconds;
    return j;
  }
  nlohmann::ordered_json identity(const nlohmann::ordered_json& common) const override {
    nlohmann::ordered_json id = common;
    id["run"] = "host";
    return id;
  }
  void save(Checkpoint& c) const override {
    c.progress["optimizer_steps"] = m_host.optimizer().steps();
    c.params = m_host.params();
    c.state = m_host.optimizer().state();
  }
  void restore(const Checkpoint& c, int64_t /*step*/, const std::string& path) override {
    m_host.params() = c.params;
    m_host.optimizer().state() = c.state;
    m_host.optimizer().set_steps(progress_field<int64_t>(c.progress, "optimizer_steps", path));
  }

 private:
  ChipTrainerOptions m_options;
  mutable graph::HostTrainer m_host;  // its accessors are not const
};

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
    return std::make_unique<HostRunTrainer>(o.model, trainer_options());
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
