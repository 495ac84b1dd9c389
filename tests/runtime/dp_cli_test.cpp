// `tessera train --chips N`: bad flags give one exact error line; a short run writes the
// data-parallel report. Runs the built `tessera` executable (skipped when it has not been built in
// this build tree, or without the Fashion-MNIST package).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/cli_run.h"

namespace {

std::string config(const std::string& name) {
  return std::string(TESSERA_SOURCE_DIR) + "/configs/" + name;
}

// stderr of `tessera args` (stdout dropped); status in `status`.
std::string run(const std::string& args, int& status) {
  tessera::testing::CliResult r = tessera::testing::run_cli(args, /*keep_stderr=*/true);
  status = r.status;
  return std::move(r.out);
}

class DpCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!tessera::testing::cli_binary_exists()) GTEST_SKIP() << "tessera not built";
    if (!std::filesystem::exists("/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz"))
      GTEST_SKIP() << "dataset-fashion-mnist not installed";
  }
  void expect_error(const std::string& args, const std::string& message) {
    int status = 0;
    EXPECT_EQ(run(args, status), "tessera: error: " + message + "\n") << args;
    EXPECT_NE(status, 0) << args;
  }
};

TEST_F(DpCli, ZeroChips_bad) {
  expect_error("train --chips 0 --steps 1 --batch 8", "train: --chips 0: need at least 1");
}

TEST_F(DpCli, ThreadCountOutsideOneTo1024IsAUsageErrorNamingTheFlag_bad) {
  for (const auto& [value, message] : std::vector<std::pair<std::string, std::string>>{
           {"0", "--threads: must be a positive integer, got '0'"},
           {"-2", "--threads: must be a positive integer, got '-2'"},
           {"1025", "--threads: at most 1024 threads, got '1025'"},
           {"99999999999", "--threads: at most 1024 threads, got '99999999999'"}})
    for (const std::string& command : {std::string("train --chips 2 --steps 1 --batch 8"),
                                       std::string("bench allreduce --chips 2 --bytes 64")}) {
      int status = 0;
      const std::string err = run(command + " --threads " + value, status);
      EXPECT_NE(status, 0) << command << " " << value;
      EXPECT_NE(err.find(message), std::string::npos) << err;
    }
}

TEST_F(DpCli, MoreProcessorsThanSamplesPerBatch_bad) {
  expect_error("train --chips 4 --batch 3 --steps 1",
               "train: batch 3 has fewer samples than the 4 processors (4 chips x 1 cores)");
  expect_error("train --chips 4 --batch 7 --steps 1 --config " + config("board4.json"),
               "train: batch 7 has fewer samples than the 8 processors (4 chips x 2 cores)");
}

TEST_F(DpCli, CoresPerChipOrChipsDifferingFromTheConfig_bad) {
  expect_error(
      "train --chips 4 --cores-per-chip 1 --steps 1 --batch 8 --config " + config("board4.json"),
      "train: --cores-per-chip 1 does not match the config's system.cores_per_chip 2");
  expect_error("train --chips 2 --steps 1 --batch 8 --config " + config("board4.json"),
               "train: --chips 2 does not match the config's system.chips 4");
}

// --set reaches the config's system section: one chip of the board (its 2 cores) instead of 4; a
// system the overrides leave inconsistent is refused naming the key.
TEST_F(DpCli, SetOverridesTheConfigsSystem) {
  const std::string report = std::string(TESSERA_BINARY_DIR) + "/dp_cli_set_system.json";
  const std::string common = "train --steps 1 --epochs 1 --batch 8 --config " +
                             config("board4.json") + " --set system.chips=";
  int status = 0;
  run(common + "1 --set system.chips_per_board=1 --chips 1 --report " + report, status);
  ASSERT_EQ(status, 0);
  std::ifstream in(report);
  EXPECT_EQ(nlohmann::json::parse(in)["epochs"][0]["processors"], 2);
  std::filesystem::remove(report);
  expect_error(
      common + "2 --chips 2",
      config("board4.json") +
          " + overrides: key 'system.chips': 2 chips but 1 boards x 4 chips per board = 4");
}

// A report without what differs between an interrupted and an uninterrupted run.
nlohmann::json comparable_report(const std::string& path) {
  std::ifstream in(path);
  nlohmann::json r = nlohmann::json::parse(in);
  r.erase("resumed_from");
  r.erase("host");  // host time of the threads and ranks
  for (auto& e : r["epochs"]) e.erase("host_seconds");
  return r;
}

TEST_F(DpCli, AllReduceFlag_bad) {
  expect_error("train --allreduce torus --steps 1 --batch 8", "train: --allreduce needs --chips");
  expect_error("train --chips 2 --allreduce tree --steps 1 --batch 8",
               "--allreduce: 'tree': expected auto, ring or torus");
}

TEST_F(DpCli, TorusAllReduceRunReportsItsAlgorithmAndFewerSupersteps) {
  const std::string report = std::string(TESSERA_BINARY_DIR) + "/dp_cli_torus_report.json";
  const std::string args =
      "train --chips 2 --cores-per-chip 2 --batch 8 --steps 1 --epochs 1 --optimizer sgd --lr 0.05 "
      "--report " +
      report;
  int status = 0;
  nlohmann::json r[2];
  for (int i = 0; i < 2; ++i) {
    run(args + (i == 1 ? " --allreduce torus" : " --allreduce ring"), status);
    ASSERT_EQ(status, 0);
    std::ifstream in(report);
    r[i] = nlohmann::json::parse(in);
  }
  EXPECT_EQ(r[0]["allreduce"], "ring");
  EXPECT_EQ(r[1]["allreduce"], "torus");
  // A line of 2 chips x 2 cores: grid 2 x 2, 4 supersteps per gradient chunk instead of 6.
  EXPECT_EQ(r[1]["epochs"][0]["supersteps"].get<int64_t>() * 6,
            r[0]["epochs"][0]["supersteps"].get<int64_t>() * 4);
  std::filesystem::remove(report);
}

// The report's host.phases (runtime/run_loop.h host_phases_json), for the dataset read before
// the trainer is built (1 thread) and while it is built (2 threads): host seconds of every phase,
// the same in the one rank's per_rank entry.
TEST_F(DpCli, ReportGivesHostSecondsByPhase) {
  const std::string report = std::string(TESSERA_BINARY_DIR) + "/dp_cli_phases_report.json";
  for (const std::string threads : {"1", "2"}) {
    int status = 0;
    run("train --chips 2 --batch 8 --steps 2 --epochs 1 --optimizer sgd --lr 0.05 --threads " +
            threads + " --report " + report,
        status);
    ASSERT_EQ(status, 0) << threads;
    std::ifstream in(report);
    const nlohmann::json host = nlohmann::json::parse(in).at("host");
    const nlohmann::json& phases = host.at("phases");
    for (const char* key :
         {"load_seconds", "build_seconds", "train_seconds", "eval_seconds", "checkpoint_seconds"})
      EXPECT_GE(phases.at(key).get<double>(), 0) << key << ", " << threads << " threads";
    EXPECT_GT(phases.at("load_seconds").get<double>(), 0);
    EXPECT_GT(phases.at("train_seconds").get<double>(), 0);
    EXPECT_EQ(host.at("per_rank").at(0).at("phases"), phases);
  }
  std::filesystem::remove(report);
}

// --allreduce auto (the default): the torus where the machine's grid has two or more dimensions
// larger than 1 (2 chips x 2 cores), the ring on a one-dimensional grid (3 chips x 1 core).
TEST_F(DpCli, DefaultAllReduceIsTheTorusOnGridsOfTwoOrMoreDimensions) {
  const std::string report = std::string(TESSERA_BINARY_DIR) + "/dp_cli_auto_report.json";
  for (const auto& [shape, algorithm] : {std::pair{"--chips 2 --cores-per-chip 2", "torus"},
                                         std::pair{"--chips 3 --cores-per-chip 1", "ring"}}) {
    for (const std::string flag : {"", " --allreduce auto"}) {
      int status = 0;
      run(std::string("train ") + shape +
              " --batch 8 --steps 1 --epochs 1 --optimizer sgd --lr 0.05 --report " + report + flag,
          status);
      ASSERT_EQ(status, 0) << shape << flag;
      std::ifstream in(report);
      EXPECT_EQ(nlohmann::json::parse(in)["allreduce"], algorithm) << shape << flag;
    }
  }
  std::filesystem::remove(report);
}

// Two epochs of `common` + "2 ...": uninterrupted, and interrupted after the first then resumed;
// the reports must agree (their evaluation reads the model; with batch normalisation, its running
// averages from the checkpoint).
void expect_resumed_equals_uninterrupted(const std::string& common, const std::string& name) {
  const std::string dir = std::string(TESSERA_BINARY_DIR) + "/" + name;
  const std::string full = dir + "/full.json", resumed = dir + "/resumed.json";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  int status = 0;
  run(common + "2 --epochs 2 --report " + full, status);
  ASSERT_EQ(status, 0);
  run(common + "2 --epochs 1 --checkpoint-dir " + dir + "/ckpt", status);
  ASSERT_EQ(status, 0);
  run(common + "2 --epochs 2 --checkpoint-dir " + dir + "/ckpt --resume --report " + resumed,
      status);
  ASSERT_EQ(status, 0);
  std::ifstream in(resumed);
  EXPECT_EQ(nlohmann::json::parse(in)["resumed_from"], dir + "/ckpt/ckpt-0000000002.tsck");
  EXPECT_EQ(comparable_report(resumed).dump(), comparable_report(full).dump());
  EXPECT_EQ(run(common + "3 --epochs 2 --checkpoint-dir " + dir + "/ckpt --resume", status),
            "tessera: error: " + dir +
                "/ckpt/ckpt-0000000004.tsck: checkpoint is for chips 2, this run has chips 3\n");
  std::filesystem::remove_all(dir);
}

TEST_F(DpCli, ResumedRunWritesTheReportOfAnUninterruptedOne) {
  expect_resumed_equals_uninterrupted(
      "train --batch 8 --steps 2 --optimizer sgd --lr 0.05 --chips ", "dp_cli_checkpoints");
}

// Batch normalisation's running averages travel with the checkpoint (overlapped buckets too).
TEST_F(DpCli, ResumedResNetRunWritesTheReportOfAnUninterruptedOne) {
  expect_resumed_equals_uninterrupted(
      "train --model resnet18 --width 4 --batch 4 --steps 2 --optimizer sgd --lr 0.05 "
      "--bucket-words 256 --chips ",
      "dp_cli_resnet_checkpoints");
}

TEST_F(DpCli, ShortRunReportsTheExchangeAndTheSystem) {
  const std::string report = std::string(TESSERA_BINARY_DIR) + "/dp_cli_report.json";
  int status = 0;
  run("train --chips 2 --cores-per-chip 2 --batch 8 --steps 2 --epochs 1 --optimizer sgd --lr 0.05 "
      "--report " +
          report,
      status);
  ASSERT_EQ(status, 0);
  std::ifstream in(report);
  const nlohmann::json r = nlohmann::json::parse(in);
  EXPECT_EQ(r["processors"], 4);
  EXPECT_EQ(r["resolved_config"]["system.chips"], 2);
  EXPECT_EQ(r["resolved_config"]["system.cores_per_chip"], 2);
  const nlohmann::json& e = r["epochs"][0];
  EXPECT_EQ(e["steps"], 2);
  EXPECT_EQ(e["samples"], 16);
  EXPECT_GT(e["exchange_seconds"].get<double>(), 0);
  EXPECT_GT(e["compute_seconds"].get<double>(), 0);
  EXPECT_GT(e["exchange_bytes"].get<double>(), 0);
  EXPECT_GT(e["link_utilization"].get<double>(), 0);
  EXPECT_GT(e["scaling_efficiency"].get<double>(), 0);
  EXPECT_LT(e["scaling_efficiency"].get<double>(), 1.0);
  EXPECT_EQ(e["test_accuracy"].get<double>() >= 0 && e["test_accuracy"].get<double>() <= 1, true);
  std::filesystem::remove(report);
}

TEST_F(DpCli, BucketFlagsWithoutChipsOrBuckets_bad) {
  expect_error("train --bucket-words 100 --steps 1 --batch 8",
               "train: --bucket-words and --no-overlap need --chips");
  expect_error("train --chips 2 --bucket-words -5 --steps 1 --batch 8",
               "train: --bucket-words -5: must be >= 0");
  expect_error("train --chips 2 --no-overlap --steps 1 --batch 8",
               "train: --no-overlap needs --bucket-words (without buckets nothing overlaps)");
}

TEST_F(DpCli, BucketedRunReportsItsScheduleAndOverlapEqualsTheNonOverlappedLoss) {
  const std::string report = std::string(TESSERA_BINARY_DIR) + "/dp_cli_bucket_report.json";
  nlohmann::json r[2];
  for (int overlap : {1, 0}) {
    int status = 0;
    run("train --chips 3 --cores-per-chip 1 --batch 8 --steps 2 --epochs 1 --bucket-words 40000 " +
            std::string(overlap ? "" : "--no-overlap ") + "--report " + report,
        status);
    ASSERT_EQ(status, 0);
    std::ifstream in(report);
    r[overlap] = nlohmann::json::parse(in);
  }
  EXPECT_EQ(r[1]["bucket_words"], 40000);
  EXPECT_EQ(r[1]["buckets"], 2);
  EXPECT_EQ(r[1]["overlap"], true);
  EXPECT_EQ(r[0]["overlap"], false);
  EXPECT_GT(r[1]["overlapped_supersteps_per_step"].get<int>(), 0);
  EXPECT_EQ(r[0]["overlapped_supersteps_per_step"], 0);
  EXPECT_GT(r[1]["epochs"][0]["overlap_seconds"].get<double>(), 0);
  EXPECT_EQ(r[0]["epochs"][0]["overlap_seconds"].get<double>(), 0);
  EXPECT_EQ(r[1]["epochs"][0]["loss"], r[0]["epochs"][0]["loss"]);
  std::filesystem::remove(report);
}

}  // namespace
