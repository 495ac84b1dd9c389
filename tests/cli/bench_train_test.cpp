// `tessera bench train` and `tessera bench compile`: runs the built `tessera` executable (skipped
// when it has not been built in this build tree) and checks the JSON it prints. No timing
// assertions: only that the figures exist and are consistent with each other and with the simulated
// machine.
#include <cstdio>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/cli_run.h"

namespace {

using Result = tessera::testing::CliResult;
Result run(const std::string& args, bool keep_stderr = false) {
  return tessera::testing::run_cli(args, keep_stderr);
}

class BenchTrainCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!tessera::testing::cli_binary_exists()) GTEST_SKIP() << "tessera not built";
  }
};

TEST_F(BenchTrainCli, JsonHasStepTimesRatioAndSimulatedFigures) {
  const Result r = run("bench train --model mlp --batch 8 --steps 2 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("model"), "mlp");
  EXPECT_EQ(j.at("batch"), 8);
  EXPECT_EQ(j.at("steps"), 2);
  const double sim = j.at("sim_step_seconds"), ref = j.at("ref_step_seconds");
  EXPECT_GT(sim, 0.0);
  EXPECT_GT(ref, 0.0);
  EXPECT_DOUBLE_EQ(j.at("ratio").get<double>(), sim / ref);
  EXPECT_GT(j.at("ratio_best").get<double>(), 0.0);
  const int64_t cycles = j.at("cycles_per_step"), bundles = j.at("bundles_per_step");
  EXPECT_GT(bundles, 100);     // forward, loss, backward and update of three layers
  EXPECT_GE(cycles, bundles);  // at most one bundle issues per cycle
  const double mxu = j.at("mxu_utilization"), vec = j.at("vector_utilization");
  EXPECT_GT(mxu, 0.0);
  EXPECT_LE(mxu, 1.0);
  EXPECT_GT(vec, 0.0);
  EXPECT_LE(vec, 1.0);
  EXPECT_GT(j.at("sim_bundles_per_second").get<double>(), 0.0);
}

TEST_F(BenchTrainCli, SimulatedFiguresAreDeterministic) {
  const nlohmann::json a = nlohmann::json::parse(run("bench train --batch 8 --steps 1 --json").out);
  const nlohmann::json b = nlohmann::json::parse(run("bench train --batch 8 --steps 1 --json").out);
  for (const char* key :
       {"cycles_per_step", "bundles_per_step", "mxu_utilization", "vector_utilization"})
    EXPECT_EQ(a.at(key), b.at(key)) << key;
}

TEST_F(BenchTrainCli, BadFlags_bad) {
  Result r = run("bench train --steps 0", true);
  EXPECT_EQ(r.status >> 8, 2);
  EXPECT_EQ(r.out, "tessera: error: bench train: --steps must be >= 1\n");
  r = run("bench train --batch 0", true);
  EXPECT_EQ(r.status >> 8, 2);
  EXPECT_EQ(r.out, "tessera: error: bench train: --batch must be >= 1\n");
  r = run("bench train --model nope --steps 1", true);
  EXPECT_EQ(r.status >> 8, 2);  // an unknown zoo name is a bad flag value
  EXPECT_NE(r.out.find("nope"), std::string::npos) << r.out;
}

TEST_F(BenchTrainCli, BenchCompileRowsPerProcessorCountWithOneImageOfTheSameSize) {
  const Result r = run("bench compile --procs 1,3,5 --words 1000 --reps 2 --json");
  ASSERT_EQ(r.status, 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["reps"], 2);
  ASSERT_EQ(j["rows"].size(), 3u);
  const int counts[] = {1, 3, 5};
  for (size_t i = 0; i < 3; ++i) {
    const auto& row = j["rows"][i];
    EXPECT_EQ(row["processors"], counts[i]);
    EXPECT_EQ(row["bundles"], j["rows"][0]["bundles"]);  // one image whatever the count
    EXPECT_GT(row["one_image_seconds"].get<double>(), 0.0);
    EXPECT_GT(row["one_image_separate_seconds"].get<double>(),
              0.0);  // the separate-copies loader, for comparison
    EXPECT_LT(row["one_image_patch_seconds"].get<double>(), row["one_image_seconds"].get<double>());
    EXPECT_GT(row["per_processor_seconds"].get<double>(), 0.0);
  }
  EXPECT_EQ(j["rows"][0]["one_image_ratio"], 1.0);
}

TEST_F(BenchTrainCli, BenchCompileOfTheMlpTrainingImageHasOneImageSizeForEveryCount) {
  const Result r = run("bench compile --program mlp --shard 2 --procs 1,3 --reps 1 --json");
  ASSERT_EQ(r.status, 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["program"], "mlp");
  EXPECT_EQ(j["shard"], 2);
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][1]["processors"], 3);
  EXPECT_EQ(j["rows"][1]["bundles"], j["rows"][0]["bundles"]);
  EXPECT_GT(j["rows"][0]["bundles"].get<int>(),
            1000);  // the whole training step, not the collective alone
  EXPECT_GT(j["rows"][1]["per_processor_seconds"].get<double>(), 0.0);
}

TEST_F(BenchTrainCli, BenchCompileBadFlags_bad) {
  EXPECT_EQ(run("bench compile --program nope", true).out,
            "tessera: error: --program: 'nope': expected allreduce or mlp\n");
  EXPECT_EQ(run("bench compile --program mlp --shard 0", true).out,
            "tessera: error: --shard: 0: need at least 1 sample\n");
  EXPECT_EQ(run("bench compile --per-processor-reps -1", true).out,
            "tessera: error: bench compile: --per-processor-reps must not be negative\n");
  EXPECT_EQ(run("bench compile --procs 0", true).out,
            "tessera: error: --procs: '0' is not a positive processor count\n");
  EXPECT_EQ(run("bench compile --reps 0", true).out,
            "tessera: error: bench compile: --reps must be positive\n");
}

}  // namespace
