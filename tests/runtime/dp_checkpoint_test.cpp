// Checkpoints of data-parallel runs (runtime/data_parallel_run.h): a run interrupted and resumed
// ends with the same weights on every processor, the same optimizer state and the same report
// (every epoch figure but host_seconds, and the system's fabric statistics) as an uninterrupted
// run, bit for bit: on 2 and 3 processors, ragged shards, 5% link loss, Adam on the unit. A
// checkpoint of another machine, a single-chip one, or a damaged one is refused.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "chip_test_data.h"
#include "runtime/checkpoint.h"
#include "runtime/data_parallel_run.h"
#include "support/error_of.h"
#include "support/temp_dir.h"

namespace tessera::runtime {
namespace {

using tessera::testing::error_of;
using tessera::testing::TempDir;

struct Data {
  Dataset train = chip_test::synthetic_dataset("synthetic", 36,
                                               1);  // batch 8: 4 steps of 8 + one of 4 per epoch
  Dataset test = chip_test::synthetic_dataset("synthetic-test", 12, 2);
};

const Data& data() {
  static const Data d;
  return d;
}

using chip_test::machine;

DataParallelRunOptions options(graph::OptimizerKind kind, const system::SystemSpec& sys,
                               const std::string& dir) {
  DataParallelRunOptions o;
  o.model_name = "mlp";
  o.model = graph::zoo_spec("mlp");
  o.config = load_run_config(std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json");
  o.dp.trainer.batch = 8;
  o.dp.trainer.optimizer.kind = kind;
  o.dp.trainer.optimizer.lr = kind == graph::OptimizerKind::kAdam ? 1e-3 : 0.05;
  o.dp.system = sys;
  o.dp.fabric_seed = 5;
  o.dp.check_replicas = true;
  o.epochs = 2;
  o.checkpoint_dir = dir;
  return o;
}

struct Outcome {
  std::vector<Tensors> params;  // per processor
  Tensors state;
  int64_t steps = 0;
  nlohmann::ordered_json report;
};

Outcome outcome_of(const DataParallelRun& r) {
  Outcome o;
  for (int p = 0; p < r.trainer().processors(); ++p) o.params.push_back(r.trainer().params(p));
  o.state = r.trainer().replica_state().second;
  o.steps = r.trainer().steps();
  o.report = r.report();
  o.report.erase("resumed_from");
  for (auto& e : o.report["epochs"])
    e.erase("host_seconds");  // wall time; everything else must match
  return o;
}

void expect_same(const Outcome& a, const Outcome& b) {
  ASSERT_EQ(a.params.size(), b.params.size());
  for (size_t p = 0; p < a.params.size(); ++p)
    EXPECT_EQ(chip_test::differing_words(a.params[p], b.params[p]), 0u) << p;
  EXPECT_EQ(chip_test::differing_words(a.state, b.state), 0u);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.report.dump(),
            b.report.dump());  // losses, accuracies, times, link figures, fabric statistics
}

Outcome uninterrupted(graph::OptimizerKind kind, const system::SystemSpec& sys) {
  DataParallelRun r(data().train, data().test, options(kind, sys, ""));
  EXPECT_TRUE(r.run());
  return outcome_of(r);
}

// Checkpoints every `every` steps, stops after global step `stop`, resumes in a new run (a new
// simulated system) and finishes; *from is the checkpoint it resumed from.
Outcome interrupted(graph::OptimizerKind kind, const system::SystemSpec& sys, int64_t every,
                    int64_t stop, std::string* from) {
  TempDir dir;
  DataParallelRunOptions o = options(kind, sys, dir.str());
  o.checkpoint_every = every;
  {
    DataParallelRun first(data().train, data().test, o);
    TrainingCallbacks cb;
    cb.keep_going = [stop](int64_t step) { return step < stop; };
    EXPECT_FALSE(first.run(cb));
  }
  o.resume = true;
  DataParallelRun second(data().train, data().test, o);
  *from = std::filesystem::path(second.resumed_from()).filename().string();
  EXPECT_TRUE(second.run());
  return outcome_of(second);
}

TEST(DataParallelResume, MidEpochResumeOnTwoProcessorsIsBitIdentical_Sgd) {
  const system::SystemSpec sys = machine(2, 1, 0);
  const Outcome full = uninterrupted(graph::OptimizerKind::kSgd, sys);
  std::string from;
  expect_same(interrupted(graph::OptimizerKind::kSgd, sys, 3, 3, &from), full);
  EXPECT_EQ(from, "ckpt-0000000003.tsck");
}

TEST(DataParallelResume, ThreeProcessorsWithFivePercentLossAndAdamOnTheUnitResumeBitIdentical) {
  const system::SystemSpec sys = machine(3, 1, 0.05);
  const Outcome full = uninterrupted(graph::OptimizerKind::kAdam, sys);
  EXPECT_GT(full.report["epochs"][1]["retransmissions"].get<int64_t>(),
            0);  // the loss streams matter
  std::string from;
  // Stopped after step 7 (epoch 2, step 2); the newest checkpoint is step 6, mid epoch 2; shards 3,
  // 3, 2.
  expect_same(interrupted(graph::OptimizerKind::kAdam, sys, 3, 7, &from), full);
  EXPECT_EQ(from, "ckpt-0000000006.tsck");
}

TEST(DataParallelResume, EpochEndResumeOnTwoChipsOfTwoCoresIsBitIdentical_Adam) {
  const system::SystemSpec sys = machine(2, 2, 0.05);
  const Outcome full = uninterrupted(graph::OptimizerKind::kAdam, sys);
  std::string from;
  expect_same(interrupted(graph::OptimizerKind::kAdam, sys, 0, 6, &from), full);
  EXPECT_EQ(from, "ckpt-0000000005.tsck");  // the end of epoch 1
}

// One epoch with checkpoints (SGD, 2 processors in a line unless `sys` says otherwise); returns
// the newest checkpoint's path.
std::string one_epoch_checkpoint(const std::string& dir,
                                 const system::SystemSpec& sys = machine(2, 1, 0)) {
  DataParallelRunOptions o = options(graph::OptimizerKind::kSgd, sys, dir);
  o.epochs = 1;
  DataParallelRun r(data().train, data().test, o);
  r.run();
  return (std::filesystem::path(dir) / "ckpt-0000000005.tsck").string();
}

TEST(DataParallelResume, AnotherMachineIsRefusedNamingTheMismatch_bad) {
  TempDir dir;
  const std::string path = one_epoch_checkpoint(dir.str());
  const auto resume_on = [&](const system::SystemSpec& sys, const std::string& from) {
    DataParallelRunOptions o = options(graph::OptimizerKind::kSgd, sys, from);
    o.resume = true;
    return error_of([&] { DataParallelRun r(data().train, data().test, o); });
  };
  EXPECT_EQ(resume_on(machine(3, 1, 0), dir.str()),
            path + ": checkpoint is for chips 2, this run has chips 3");
  EXPECT_EQ(resume_on(machine(2, 2, 0), dir.str()),
            path + ": checkpoint is for cores_per_chip 1, this run has cores_per_chip 2");
  EXPECT_EQ(resume_on(machine(2, 1, 0), dir.str()), "(no error)");
  const std::string ring_dir = dir.file("ring");
  const std::string ring_path = one_epoch_checkpoint(ring_dir, machine(3, 1, 0));
  system::SystemSpec line = machine(3, 1, 0);
  line.topology = system::Topology::kLine;
  EXPECT_EQ(resume_on(line, ring_dir),
            ring_path + ": checkpoint is for topology \"ring\", this run has topology \"line\"");
}

// A checkpoint written before the torus all-reduce existed has no "allreduce" in its identity: it
// resumes as a ring run (all such runs used the ring) to the uninterrupted run, and a torus run
// refuses it.
TEST(DataParallelResume, CheckpointWithoutAllReduceFieldResumesAsRing) {
  TempDir dir;
  Checkpoint c = read_checkpoint(one_epoch_checkpoint(dir.str()));
  ASSERT_EQ(c.identity.at("allreduce"), "ring");
  c.identity.erase("allreduce");
  const std::string old_dir = dir.file("old");
  std::filesystem::create_directories(old_dir);
  const std::string old_path = old_dir + "/ckpt-0000000005.tsck";
  write_checkpoint(old_path, c);

  DataParallelRunOptions o = options(graph::OptimizerKind::kSgd, machine(2, 1, 0), old_dir);
  o.resume = true;
  o.dp.allreduce = compiler::CollectiveAlgorithm::kTorus;
  EXPECT_EQ(error_of([&] { DataParallelRun r(data().train, data().test, o); }),
            old_path + ": checkpoint is for allreduce \"ring\", this run has allreduce \"torus\"");

  o.dp.allreduce = compiler::CollectiveAlgorithm::kRing;
  DataParallelRun resumed(data().train, data().test, o);
  EXPECT_EQ(resumed.resumed_from(), old_path);
  EXPECT_TRUE(resumed.run());
  expect_same(outcome_of(resumed), uninterrupted(graph::OptimizerKind::kSgd, machine(2, 1, 0)));
}

TEST(DataParallelResume, SingleChipAndDataParallelCheckpointsAreNotInterchangeable_bad) {
  TempDir dir;
  const std::string path = one_epoch_checkpoint(dir.str());
  TrainingRunOptions single;
  single.model_name = "mlp";
  single.model = graph::zoo_spec("mlp");
  single.config = load_run_config(std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json");
  single.trainer.batch = 8;
  single.trainer.optimizer.kind = graph::OptimizerKind::kSgd;
  single.trainer.optimizer.lr = 0.05;
  single.checkpoint_dir = dir.str();
  single.resume = true;
  EXPECT_EQ(
      error_of([&] { TrainingRun r(data().train, data().test, single); }),
      path + ": was written by a data-parallel run (--chips); resume it with the same --chips");

  const std::string other = dir.file("single");
  std::filesystem::create_directories(other);
  Checkpoint c = read_checkpoint(path);
  c.identity.erase("run");
  const std::string other_path = other + "/ckpt-0000000005.tsck";
  write_checkpoint(other_path, c);
  DataParallelRunOptions o = options(graph::OptimizerKind::kSgd, machine(2, 1, 0), other);
  o.resume = true;
  EXPECT_EQ(
      error_of([&] { DataParallelRun r(data().train, data().test, o); }),
      other_path + ": was written by a single-chip run (no --chips); resume it without --chips");
}

TEST(DataParallelResume, TruncatedOrCorruptCheckpointIsRefused_bad) {
  TempDir dir;
  const std::string path = one_epoch_checkpoint(dir.str());
  const std::string good = testing::read_bytes(path);
  DataParallelRunOptions o = options(graph::OptimizerKind::kSgd, machine(2, 1, 0), dir.str());
  o.resume = true;
  const auto resume = [&] {
    return error_of([&] { DataParallelRun r(data().train, data().test, o); });
  };

  testing::write_bytes(path, good.substr(0, good.size() - 7));
  EXPECT_EQ(resume(), fmt::format("{}: truncated checkpoint ({} bytes, its header describes {})",
                                  path, good.size() - 7, good.size()));
  std::string flipped = good;
  flipped[good.size() - 40] = static_cast<char>(flipped[good.size() - 40] ^ 0x01);
  testing::write_bytes(path, flipped);
  EXPECT_NE(resume().find(path + ": checksum mismatch"), std::string::npos);

  // Well-formed files whose state does not fit: the fabric's, the system's, the trainer's.
  const Checkpoint c = [&] {
    testing::write_bytes(path, good);
    return read_checkpoint(path);
  }();
  const auto with = [&](const std::function<void(nlohmann::ordered_json&)>& damage) {
    Checkpoint d = c;
    damage(d.progress);
    write_checkpoint(path, d);
    return resume();
  };
  EXPECT_EQ(
      with([](auto& p) { p["trainer"]["system"]["fabrics"][0]["channels"].erase(0); }),
      path + ": corrupt fabric state: 'channels' should have 2 entries (this fabric's), it has 1");
  EXPECT_EQ(with([](auto& p) {
              p["trainer"]["system"]["core_cycles"] = {1, 2, 3};
            }),
            path + ": corrupt system state: 'core_cycles' should have 2 entries");
  EXPECT_EQ(with([](auto& p) {
              p["trainer"]["system"]["core_cycles"] = {-1, 0};
            }),
            path + ": processor 0: cannot move the clock back from cycle 0 to -1");
  EXPECT_EQ(with([](auto& p) { p["trainer"]["totals"].erase("wall_ps"); }),
            path + ": corrupt data-parallel state ('wall_ps')");
  EXPECT_EQ(with([](auto& p) { p.erase("skipped"); }),
            path + ": corrupt checkpoint progress (position)");
  Checkpoint small = c;
  small.params.pop_back();
  write_checkpoint(path, small);
  EXPECT_NE(resume().find(path + ": does not fit this model: train: parameter: "),
            std::string::npos)
      << resume();
}

}  // namespace
}  // namespace tessera::runtime
