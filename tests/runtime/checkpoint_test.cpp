// Checkpoints: the file format refuses damaged files with exact messages; writes are atomic; a
// training run interrupted and resumed ends bit-identical to an uninterrupted one.
#include "runtime/checkpoint.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "chip_test_data.h"
#include "common/error.h"
#include "common/splitmix64.h"
#include "core/energy.h"
#include "runtime/training_run.h"
#include "support/error_of.h"
#include "support/temp_dir.h"

namespace tessera::runtime {
namespace {

namespace fs = std::filesystem;

using tessera::testing::error_of;
using tessera::testing::read_bytes;
using tessera::testing::TempDir;
using tessera::testing::write_bytes;

Checkpoint sample_checkpoint() {
  Checkpoint c;
  c.identity = {{"model", "mlp"}, {"optimizer", "adam"}, {"batch", 8}};
  c.progress = {{"epoch", 1}, {"step", 3}};
  c.params = {{1.0f, -2.5f, 3e-4f}, {0.0f}};
  c.state = {{7.0f, 8.0f}, {}};
  return c;
}

void expect_same_bits(const std::vector<std::vector<float>>& a,
                      const std::vector<std::vector<float>>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].size(), b[i].size()) << "tensor " << i;
    if (!a[i].empty()) {
      EXPECT_EQ(std::memcmp(a[i].data(), b[i].data(), 4 * a[i].size()), 0) << "tensor " << i;
    }
  }
}

TEST(CheckpointFormat, RoundTripKeepsEveryBitAndTheJson) {
  const Checkpoint c = sample_checkpoint();
  const Checkpoint d = decode_checkpoint(encode_checkpoint(c), "x");
  EXPECT_EQ(d.identity, c.identity);
  EXPECT_EQ(d.progress, c.progress);
  expect_same_bits(d.params, c.params);
  expect_same_bits(d.state, c.state);
}

TEST(CheckpointFormat, EveryTruncationIsRefused_bad) {
  const std::string bytes = encode_checkpoint(sample_checkpoint());
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::string msg = error_of([&] { decode_checkpoint(bytes.substr(0, n), "f.tsck"); });
    EXPECT_EQ(msg.rfind("f.tsck: ", 0), 0u) << n << ": " << msg;
    EXPECT_NE(msg, "(no error)") << n;
  }
  EXPECT_EQ(error_of([&] { decode_checkpoint(bytes.substr(0, 10), "f.tsck"); }),
            "f.tsck: truncated checkpoint (10 bytes; the fixed fields alone are 20)");
  EXPECT_EQ(error_of([&] { decode_checkpoint(bytes.substr(0, bytes.size() - 1), "f.tsck"); }),
            fmt::format("f.tsck: truncated checkpoint ({} bytes, its header describes {})",
                        bytes.size() - 1, bytes.size()));
}

TEST(CheckpointFormat, EveryBitFlipIsRefused_bad) {
  const std::string bytes = encode_checkpoint(sample_checkpoint());
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string d = bytes;
      d[i] = static_cast<char>(d[i] ^ (1 << bit));
      const std::string msg = error_of([&] { decode_checkpoint(d, "f.tsck"); });
      ASSERT_EQ(msg.rfind("f.tsck: ", 0), 0u) << i << "." << bit << ": " << msg;
    }
  }
  std::string d = bytes;
  d[bytes.size() - 6] = static_cast<char>(d[bytes.size() - 6] ^ 1);  // a payload bit
  EXPECT_NE(
      error_of([&] { decode_checkpoint(d, "f.tsck"); }).find("f.tsck: checksum mismatch (stored "),
      std::string::npos);
}

TEST(CheckpointFormat, MagicAndVersionAreChecked_bad) {
  std::string bytes = encode_checkpoint(sample_checkpoint());
  std::string other = bytes;
  other[0] = 'X';
  EXPECT_EQ(error_of([&] { decode_checkpoint(other, "f"); }),
            "f: not a tessera checkpoint (bad magic)");
  bytes[8] = 1;  // a file of the previous format
  EXPECT_EQ(error_of([&] { decode_checkpoint(bytes, "f"); }),
            "f: checkpoint format version 1 is not supported (this build reads 2)");
}

TEST(CheckpointFormat, IdentityMismatchNamesKeyAndBothValues_bad) {
  const Checkpoint c = sample_checkpoint();
  nlohmann::ordered_json want = c.identity;
  EXPECT_EQ(error_of([&] { check_identity("f", c.identity, want); }), "(no error)");
  want["model"] = "cnn";
  EXPECT_EQ(error_of([&] { check_identity("f", c.identity, want); }),
            "f: checkpoint is for model \"mlp\", this run has model \"cnn\"");
  want = c.identity;
  want["seed"] = 3;
  EXPECT_EQ(error_of([&] { check_identity("f", c.identity, want); }),
            "f: checkpoint has no 'seed' (this run: 3)");
}

TEST(CheckpointFormat, AnotherBatchIsNamedBeforeTheSampleCountsItChanges_bad) {
  const nlohmann::ordered_json stored = {{"model", "mlp"}, {"test_samples", 320}, {"batch", 128}};
  const nlohmann::ordered_json want = {{"model", "mlp"}, {"test_samples", 640}, {"batch", 64}};
  EXPECT_EQ(error_of([&] { check_identity("f", stored, want); }),
            "f: checkpoint is for batch 128, this run has batch 64");
}

TEST(CheckpointFiles, WriteIsAtomicAndLeavesNoTempFile) {
  TempDir dir;
  write_checkpoint(dir.file(checkpoint_file_name(5)), sample_checkpoint());
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.str()))
    names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"ckpt-0000000005.tsck"});
  const Checkpoint d = read_checkpoint(dir.file("ckpt-0000000005.tsck"));
  expect_same_bits(d.params, sample_checkpoint().params);
}

TEST(CheckpointFormat, HeaderSizesBeyondTheFileAllocateNothing_bad) {
  Checkpoint c = sample_checkpoint();
  c.params = {{}};
  std::string bytes = encode_checkpoint(c);
  const std::string empty = "\"params\":[0]", huge = "\"params\":[1099511627776]";
  bytes.replace(bytes.find(empty), empty.size(), huge);
  const size_t header_len = static_cast<uint8_t>(bytes[12]) + huge.size() - empty.size();
  ASSERT_LT(header_len, 256u);  // one byte of the little-endian length changes
  bytes[12] = static_cast<char>(header_len);
  EXPECT_EQ(error_of([&] { decode_checkpoint(bytes, "f.tsck"); }),
            fmt::format("f.tsck: truncated checkpoint ({} bytes, its header describes {})",
                        bytes.size(), bytes.size() + 4 * (uint64_t{1} << 40)));
}

TEST(CheckpointFiles, FailedWriteLeavesNoTempFile_bad) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  TempDir dir;
  // The temp file leads to /dev/full: every write fails as on a full disk.
  const std::string tmp = dir.file(".ckpt-0000000005.tsck.tmp");
  fs::create_symlink("/dev/full", tmp);
  EXPECT_EQ(
      error_of([&] { write_checkpoint(dir.file(checkpoint_file_name(5)), sample_checkpoint()); }),
      tmp + ": cannot write checkpoint: No space left on device");
  EXPECT_TRUE(fs::is_empty(dir.str()));
  EXPECT_TRUE(fs::exists("/dev/full"));
}

TEST(CheckpointFiles, DirectoryGivenAsACheckpointIsNamed_bad) {
  TempDir dir;
  EXPECT_EQ(error_of([&] { read_checkpoint(dir.str()); }),
            dir.str() + ": is a directory, not a file");
  EXPECT_EQ(error_of([&] { read_checkpoint(dir.file("none.tsck")); }),
            dir.file("none.tsck") + ": cannot open checkpoint");
}

TEST(CheckpointFiles, LeftoverTempFileIsIgnored) {
  TempDir dir;
  write_checkpoint(dir.file(checkpoint_file_name(5)), sample_checkpoint());
  // A crash during the write of step 9 leaves its temp file (half written): never chosen.
  write_bytes(dir.file(".ckpt-0000000009.tsck.tmp"),
              encode_checkpoint(sample_checkpoint()).substr(0, 30));
  write_bytes(dir.file("notes.txt"), "x");
  EXPECT_EQ(newest_checkpoint(dir.str()), dir.file("ckpt-0000000005.tsck"));
  EXPECT_EQ(list_checkpoints(dir.str()).size(), 1u);
}

TEST(CheckpointFiles, PruneKeepsTheNewest) {
  TempDir dir;
  for (int s : {12, 3, 100, 40})
    write_checkpoint(dir.file(checkpoint_file_name(s)), sample_checkpoint());
  prune_checkpoints(dir.str(), 2);
  EXPECT_EQ(list_checkpoints(dir.str()),
            (std::vector<std::string>{dir.file("ckpt-0000000040.tsck"),
                                      dir.file("ckpt-0000000100.tsck")}));
}

// ---- training runs ----

struct Fixture {
  Dataset train = chip_test::synthetic_dataset("synthetic", 36,
                                               1);  // batch 8: 4 full steps + one of 4 per epoch
  Dataset test = chip_test::synthetic_dataset("synthetic-test", 12, 2);
};

const Fixture& data() {
  static const Fixture f;
  return f;
}

TrainingRunOptions options(graph::OptimizerKind kind, const std::string& dir) {
  TrainingRunOptions o;
  o.model_name = "mlp";
  o.model = graph::zoo_spec("mlp");
  o.config = load_run_config(std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json");
  o.trainer.batch = 8;
  o.trainer.optimizer.kind = kind;
  o.trainer.optimizer.lr = kind == graph::OptimizerKind::kAdam ? 1e-3 : 0.05;
  o.epochs = 2;
  o.checkpoint_dir = dir;
  return o;
}

struct Outcome {
  std::vector<std::vector<float>> params, state;
  int64_t steps = 0;
  nlohmann::ordered_json epochs;
};

Outcome outcome_of(const TrainingRun& r) {
  Outcome o{r.trainer().params(), r.trainer().optimizer_state(), r.trainer().steps(),
            r.report()["epochs"]};
  // host_seconds is wall time; everything else, the optimizer's per-step costs included, must
  // match.
  for (auto& e : o.epochs) e.erase("host_seconds");
  return o;
}

void expect_same(const Outcome& a, const Outcome& b) {
  expect_same_bits(a.params, b.params);
  expect_same_bits(a.state, b.state);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.epochs.dump(), b.epochs.dump());  // loss, accuracy, cycles, energy, ... exactly
}

Outcome uninterrupted(graph::OptimizerKind kind) {
  TrainingRun r(data().train, data().test, options(kind, ""));
  EXPECT_TRUE(r.run());
  return outcome_of(r);
}

// Runs with checkpoints every `every` steps, stops after global step `stop`, resumes in a new
// TrainingRun (a new simulated chip) and finishes.
Outcome interrupted(graph::OptimizerKind kind, int64_t every, int64_t stop,
                    std::string* resumed_from) {
  TempDir dir;
  TrainingRunOptions o = options(kind, dir.str());
  o.checkpoint_every = every;
  {
    TrainingRun first(data().train, data().test, o);
    TrainingCallbacks cb;
    cb.keep_going = [stop](int64_t step) { return step < stop; };
    EXPECT_FALSE(first.run(cb));
  }
  o.resume = true;
  TrainingRun second(data().train, data().test, o);
  *resumed_from = fs::path(second.resumed_from()).filename().string();
  EXPECT_TRUE(second.run());
  return outcome_of(second);
}

TEST(TrainingResume, MidEpochResumeIsBitIdentical_Adam) {
  const Outcome full = uninterrupted(graph::OptimizerKind::kAdam);
  std::string from;
  expect_same(interrupted(graph::OptimizerKind::kAdam, 3, 3, &from), full);
  EXPECT_EQ(from, "ckpt-0000000003.tsck");
}

TEST(TrainingResume, ResumeRedoesStepsAfterTheLastCheckpoint_Sgd) {
  const Outcome full = uninterrupted(graph::OptimizerKind::kSgd);
  std::string from;
  // Stopped after step 7 (epoch 2, step 2); the newest checkpoint is step 6 (mid epoch 2).
  expect_same(interrupted(graph::OptimizerKind::kSgd, 3, 7, &from), full);
  EXPECT_EQ(from, "ckpt-0000000006.tsck");
}

TEST(TrainingResume, EpochEndResumeIsBitIdentical_Sgd) {
  const Outcome full = uninterrupted(graph::OptimizerKind::kSgd);
  std::string from;
  expect_same(interrupted(graph::OptimizerKind::kSgd, 0, 6, &from), full);
  EXPECT_EQ(from, "ckpt-0000000005.tsck");  // the end of epoch 1
}

TEST(TrainingResume, NoCheckpointIsAnError_bad) {
  TempDir dir;
  TrainingRunOptions o = options(graph::OptimizerKind::kSgd, dir.str());
  o.resume = true;
  EXPECT_EQ(error_of([&] { TrainingRun r(data().train, data().test, o); }),
            dir.str() + ": no checkpoint to resume from (looked for ckpt-<step>.tsck)");
  o.checkpoint_dir = "";
  EXPECT_EQ(error_of([&] { TrainingRun r(data().train, data().test, o); }),
            "train: --resume needs --checkpoint-dir");
}

TEST(TrainingResume, DamagedOrForeignCheckpointIsRefused_bad) {
  TempDir dir;
  TrainingRunOptions o = options(graph::OptimizerKind::kSgd, dir.str());
  o.epochs = 1;
  {
    TrainingRun r(data().train, data().test, o);
    r.run();
  }
  const std::string path = dir.file("ckpt-0000000005.tsck");
  const std::string good = read_bytes(path);
  o.resume = true;

  TrainingRunOptions adam = o;
  adam.trainer.optimizer.kind = graph::OptimizerKind::kAdam;
  EXPECT_EQ(error_of([&] { TrainingRun r(data().train, data().test, adam); }),
            path + ": checkpoint is for optimizer \"sgd\", this run has optimizer \"adam\"");
  TrainingRunOptions other_model = o;
  other_model.model_name = "mlp2";
  EXPECT_EQ(error_of([&] { TrainingRun r(data().train, data().test, other_model); }),
            path + ": checkpoint is for model \"mlp\", this run has model \"mlp2\"");
  TrainingRunOptions other_config = o;
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(
      read_bytes(std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json"), nullptr, true,
      true);
  doc["core"]["clock_hz"] = 1e9;
  write_bytes(dir.file("faster.json"), doc.dump());
  other_config.config = load_run_config(dir.file("faster.json"));
  EXPECT_EQ(error_of([&] { TrainingRun r(data().train, data().test, other_config); }),
            fmt::format("{}: checkpoint is for config_hash \"{}\", this run has config_hash \"{}\"",
                        path, o.config.hash, other_config.config.hash));

  write_bytes(path, good.substr(0, good.size() / 2));
  EXPECT_EQ(error_of([&] { TrainingRun r(data().train, data().test, o); }),
            fmt::format("{}: truncated checkpoint ({} bytes, its header describes {})", path,
                        good.size() / 2, good.size()));
  std::string flipped = good;
  flipped[good.size() - 100] = static_cast<char>(flipped[good.size() - 100] ^ 0x10);
  write_bytes(path, flipped);
  EXPECT_NE(error_of([&] {
              TrainingRun r(data().train, data().test, o);
            }).find(path + ": checksum mismatch"),
            std::string::npos);
  write_bytes(path, good);
  EXPECT_EQ(error_of([&] { TrainingRun r(data().train, data().test, o); }), "(no error)");
}

TEST(TrainingResume, FreshRunIntoADirectoryWithCheckpointsIsRefused_bad) {
  TempDir dir;
  write_checkpoint(dir.file(checkpoint_file_name(1)), sample_checkpoint());
  EXPECT_EQ(error_of([&] {
              TrainingRun r(data().train, data().test,
                            options(graph::OptimizerKind::kSgd, dir.str()));
            }),
            dir.str() +
                ": already holds checkpoints (continue with --resume, or use an empty directory)");
}

TEST(CheckpointFiles, AnUnusableDirectoryIsRefusedBeforeTraining_bad) {
  TempDir dir;
  write_bytes(dir.file("file"), "x");
  // Refused by the constructor, before any step: a file, a directory below a file.
  TrainingRunOptions o = options(graph::OptimizerKind::kSgd, dir.file("file"));
  EXPECT_EQ(error_of([&] { TrainingRun r(data().train, data().test, o); }),
            dir.file("file") + ": is a file, not a checkpoint directory");
  o.checkpoint_dir = dir.file("file") + "/sub";
  EXPECT_EQ(error_of([&] { TrainingRun r(data().train, data().test, o); }),
            dir.file("file") + "/sub: cannot create checkpoint directory: Not a directory");
  // A directory that does not exist yet is created, and nothing is left in it.
  o.checkpoint_dir = dir.file("a/b");
  EXPECT_EQ(error_of([&] { TrainingRun r(data().train, data().test, o); }), "(no error)");
  EXPECT_TRUE(fs::is_directory(dir.file("a/b")));
  EXPECT_TRUE(fs::is_empty(dir.file("a/b")));
}

TEST(CheckpointFiles, AReadOnlyDirectoryIsRefused_bad) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes to read-only directories";
  TempDir dir;
  fs::create_directory(dir.file("ro"));
  fs::permissions(dir.file("ro"), fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_EQ(error_of([&] { prepare_checkpoint_dir(dir.file("ro")); }),
            dir.file("ro") + ": cannot write checkpoints to this directory: Permission denied");
  fs::permissions(dir.file("ro"), fs::perms::owner_all);
}

TEST(TrainingReport, EpochFiguresMatchTheCoreOverTheTrainingSteps) {
  TrainingRunOptions o = options(graph::OptimizerKind::kAdam, "");
  o.epochs = 1;
  TrainingRun r(data().train, data().test, o);
  // Core totals before the first and after the last training step (set-up runs, such as the Adam
  // unit's initialisation, come before).
  const core::Core& core = r.trainer().core();
  // The chip's energy: the core's plus the Adam unit's (which runs inside the optimizer section).
  const auto energy_of = [&] {
    const double unit_pj = core::adam_unit_energy(core.spec().adam, core.machine().adam().stats(),
                                                  core.spec().energy.hbm_byte_pj)
                               .total;
    return core.stats().to_json()["energy"]["total_uj"].get<double>() + unit_pj * 1e-6;
  };
  const int64_t cycles0 = core.cycles(), mxu0 = core.unit_busy_cycles(isa::Unit::Mxu);
  const double energy0 = energy_of();
  int64_t cycles = -1, mxu = -1;
  double energy_uj = -1;
  TrainingCallbacks cb;
  cb.progress = [&](int, int64_t step, int64_t total, double) {
    if (step != total) return;
    cycles = core.cycles() - cycles0;
    energy_uj = energy_of() - energy0;
    mxu = core.unit_busy_cycles(isa::Unit::Mxu) - mxu0;
  };
  ASSERT_TRUE(r.run(cb));
  const nlohmann::ordered_json rep = r.report();
  EXPECT_EQ(rep["model"], "mlp");
  EXPECT_EQ(rep["config"], o.config.spec.name);
  EXPECT_EQ(rep["config_hash"], o.config.hash);
  EXPECT_EQ(rep["resolved_config"], o.config.resolved);
  ASSERT_EQ(rep["epochs"].size(), 1u);
  const auto& e = rep["epochs"][0];
  for (const char* k :
       {"epoch", "steps", "samples", "loss", "train_accuracy", "train_accuracy_samples",
        "test_accuracy", "test_loss", "sim_cycles", "sim_chip_seconds", "sim_host_link_seconds",
        "sim_seconds", "samples_per_sim_second", "mxu_utilization", "vector_utilization",
        "energy_j", "average_power_w", "host_seconds"})
    EXPECT_TRUE(e.contains(k)) << k;
  EXPECT_EQ(e["steps"], 5);
  EXPECT_EQ(e["samples"], 36);
  EXPECT_EQ(e["train_accuracy_samples"], 16);  // whole batches until >= the 12 test samples
  // No evaluation ran before the last step, so the epoch's counters are the core's totals then.
  EXPECT_EQ(e["sim_cycles"].get<int64_t>(), cycles);
  EXPECT_DOUBLE_EQ(e["mxu_utilization"].get<double>(),
                   static_cast<double>(mxu) / static_cast<double>(cycles));
  EXPECT_NEAR(e["energy_j"].get<double>(), energy_uj * 1e-6, 1e-9 * energy_uj);
  EXPECT_DOUBLE_EQ(e["sim_chip_seconds"].get<double>(),
                   static_cast<double>(cycles) / o.config.spec.clock_hz);
  EXPECT_DOUBLE_EQ(e["sim_host_link_seconds"].get<double>(),
                   36.0 * (784 + 1) * 4 / o.trainer.host_bytes_per_second);
  EXPECT_DOUBLE_EQ(e["samples_per_sim_second"].get<double>(),
                   36.0 / e["sim_seconds"].get<double>());
  EXPECT_GT(e["loss"].get<double>(), 0.0);
  // The optimizer's figures, step by step and summed.
  const auto& opt = e["optimizer"];
  EXPECT_EQ(opt["steps"], 5);
  ASSERT_EQ(opt["per_step"]["cycles"].size(), 5u);
  int64_t opt_cycles = 0;
  for (const auto& c : opt["per_step"]["cycles"]) opt_cycles += c.get<int64_t>();
  EXPECT_EQ(opt["cycles"].get<int64_t>(), opt_cycles);
  EXPECT_GT(opt["unit_energy_uj"].get<double>(), 0.0);
  EXPECT_LT(opt["unit_energy_uj"].get<double>(), opt["energy_uj"].get<double>());
  EXPECT_GE(e["test_accuracy"].get<double>(), 0.0);
  EXPECT_LE(e["test_accuracy"].get<double>(), 1.0);
}

TEST(RunConfig, HashIgnoresFormattingAndSpelledOutDefaults) {
  TempDir dir;
  const std::string base = std::string(TESSERA_SOURCE_DIR) + "/configs/small.json";
  const RunConfig a = load_run_config(base);
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(read_bytes(base), nullptr, true, true);
  write_bytes(dir.file("same.json"), "// reformatted\n" + doc.dump(4));
  EXPECT_EQ(load_run_config(dir.file("same.json")).hash, a.hash);
  doc["core"]["clock_hz"] = a.spec.clock_hz * 2;
  write_bytes(dir.file("faster.json"), doc.dump());
  const RunConfig b = load_run_config(dir.file("faster.json"));
  EXPECT_NE(b.hash, a.hash);
  EXPECT_EQ(b.resolved["core.clock_hz"].get<double>(), a.spec.clock_hz * 2);
  EXPECT_EQ(load_run_config("").resolved.size(), a.resolved.size());
}

}  // namespace
}  // namespace tessera::runtime
