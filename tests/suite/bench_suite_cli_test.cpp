// `tessera bench suite`: runs the built `tessera` executable (skipped when it has not been built
// in this build tree) on rows that finish quickly and checks the JSON it prints and its refusal of
// bad flags. No timing assertions.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/cli_run.h"

namespace {

using tessera::testing::run_cli;

class BenchSuiteCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!tessera::testing::cli_binary_exists()) GTEST_SKIP() << "tessera not built";
  }
};

const std::string kV2 = std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json";

TEST_F(BenchSuiteCli, JsonIsATaggedSuiteReportWithTheCoreAndTheSelectedRows) {
  const auto r = run_cli("bench suite --config " + kV2 + " --only '^gemm_256$|^resnet18$' --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("format"), "tessera-suite");
  EXPECT_EQ(j.at("version"), 1);
  EXPECT_EQ(j.at("config"), "tpu-v2-like");
  EXPECT_EQ(j.at("config_hash").get<std::string>().size(), 16u);
  const nlohmann::json& core = j.at("core");
  EXPECT_EQ(core.at("clock_hz"), 700e6);
  EXPECT_EQ(core.at("mxu_count"), 1);
  for (const char* key : {"mxu_rows", "mxu_cols", "lanes", "sublanes", "hbm_bytes_per_cycle"})
    EXPECT_TRUE(core.contains(key)) << key;
  EXPECT_GT(j.at("host_seconds").get<double>(), 0.0);
  const nlohmann::json& rows = j.at("rows");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("name"), "gemm_256");
  EXPECT_EQ(rows[0].at("supported"), true);
  EXPECT_EQ(rows[0].at("macs"), 256 * 256 * 256);
  EXPECT_GE(rows[0].at("cycles_over_bound").get<double>(), 1.0);
  EXPECT_GT(rows[0].at("ref_host_seconds").get<double>(), 0.0);
  EXPECT_EQ(rows[1].at("name"), "resnet18");
  EXPECT_EQ(rows[1].at("supported"), true);
  EXPECT_GT(rows[1].at("cycles").get<int64_t>(), 0);
  EXPECT_EQ(rows[1].at("check"), "bit-exact vs the host reference executor in chip numerics");
}

TEST_F(BenchSuiteCli, BadFlagsAreCommandLineErrors_bad) {
  auto r = run_cli("bench suite --only '(gemm'", true);
  EXPECT_EQ(r.status >> 8, 2);
  EXPECT_EQ(
      r.out.rfind("tessera: error: bench suite: --only '(gemm' is not a regular expression", 0), 0u)
      << r.out;
  r = run_cli("bench suite --only nothing_here", true);
  EXPECT_EQ(r.status >> 8, 2);
  EXPECT_EQ(r.out, "tessera: error: bench suite: --only 'nothing_here' selects no row\n");
  EXPECT_EQ(run_cli("bench suite --seed x", true).status >> 8, 2);
  EXPECT_EQ(run_cli("bench suite --no-such-flag", true).status >> 8, 2);
}

TEST_F(BenchSuiteCli, AMissingConfigIsBadInput_bad) {
  const auto r = run_cli("bench suite --only resnet18 --config /nonexistent/c.json", true);
  EXPECT_EQ(r.status >> 8, 1);
  EXPECT_NE(r.out.find("/nonexistent/c.json"), std::string::npos) << r.out;
}

TEST_F(BenchSuiteCli, HtmlWritesAPage) {
  if (!std::filesystem::exists("/usr/share/javascript/d3/d3.min.js"))
    GTEST_SKIP() << "libjs-d3 not installed";
  const std::string page = std::string(TESSERA_BINARY_DIR) + "/bench_suite_test.html";
  std::filesystem::remove(page);
  const auto r = run_cli("bench suite --only '^gemm_256$' --html " + page);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_GT(std::filesystem::file_size(page), 1000u);
  std::filesystem::remove(page);
}

}  // namespace
