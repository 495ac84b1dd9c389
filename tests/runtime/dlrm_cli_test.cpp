// `tessera train --model dlrm`: bad flags give one line on stderr naming the flag and exit 2,
// before anything is built; `--dense-on host` runs the same sharded tables with the dense part
// untimed on the host. Runs the built `tessera` executable (skipped when it has not been built in
// this build tree).
#include <algorithm>
#include <fstream>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/cli_run.h"
#include "support/temp_dir.h"

namespace {

class DlrmCli : public ::testing::TestWithParam<std::pair<const char*, const char*>> {
 protected:
  void SetUp() override {
    if (!tessera::testing::cli_binary_exists()) GTEST_SKIP() << "tessera not built";
  }
};

TEST_P(DlrmCli, BadFlag_bad) {
  const auto [flags, want] = GetParam();
  const tessera::testing::CliResult r = tessera::testing::run_cli(
      std::string("train --model dlrm --steps 1 ") + flags, /*keep_stderr=*/true);
  const std::string& err = r.out;  // stderr (stdout dropped)
  EXPECT_EQ(r.status >> 8, 2) << err;
  EXPECT_EQ(err.rfind("tessera: error: ", 0), 0u) << err;
  EXPECT_NE(err.find(want), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

INSTANTIATE_TEST_SUITE_P(
    Flags, DlrmCli,
    ::testing::Values(std::pair{"--chips 2 --executor gpu", "'gpu': expected chip or host-f32"},
                      std::pair{"", "--model dlrm on the chip needs --chips N"},
                      std::pair{"--executor host-f32 --chips 2", "not with --chips"},
                      std::pair{"--chips 2 --dense-on gpu",
                                "--dense-on: unknown 'gpu' (known: tensor-core, host)"},
                      std::pair{"--executor host-f32 --dense-on host",
                                "--dense-on: host-f32 runs everything on the host"},
                      std::pair{"--chips 2 --zipf 0", "--zipf"},
                      std::pair{"--chips 2 --placement diagonal", "--placement"}));

nlohmann::json chip_figures(const tessera::testing::TempDir& dir, const std::string& flags) {
  const std::string report = dir.file("r.json");
  const tessera::testing::CliResult r = tessera::testing::run_cli(
      "train --model dlrm --chips 2 --rows 4096 --steps 2 --batch 64 --test 256 --threads 1 " +
          flags + " --report " + report,
      /*keep_stderr=*/true);
  EXPECT_EQ(r.status, 0) << r.out;
  std::ifstream in(report);
  if (!in) return nullptr;
  nlohmann::json j = nlohmann::json::parse(in);
  nlohmann::json chip = j.at("chip");
  if (j.contains("energy_j")) chip["energy_j"] = j["energy_j"];
  return chip;
}

class DlrmCliRun : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!tessera::testing::cli_binary_exists()) GTEST_SKIP() << "tessera not built";
  }
};

TEST_F(DlrmCliRun, DenseOnHostLeavesTheTensorCoresIdleAndTheTablesAsTheyWere) {
  tessera::testing::TempDir dir;
  const nlohmann::json tc = chip_figures(dir, "");
  const nlohmann::json host = chip_figures(dir, "--dense-on host");
  ASSERT_FALSE(tc.is_null());
  ASSERT_FALSE(host.is_null());
  EXPECT_GT(tc.at("tensor_core_cycles").get<int64_t>(), 0);
  EXPECT_EQ(host.at("tensor_core_cycles").get<int64_t>(), 0);
  // The lookups of the first step see the same tables and ids either way.
  EXPECT_EQ(host.at("exchange").at("id_bytes"), tc.at("exchange").at("id_bytes"));
  EXPECT_LT(host.at("cycles").get<int64_t>(), tc.at("cycles").get<int64_t>());
  // Energy: the sparse cores' work is the ids' either way; the tensor cores' only when they ran.
  const nlohmann::json& e = tc.at("energy");
  EXPECT_GT(e.at("sparse_cores_j").get<double>(), 0);
  EXPECT_GT(e.at("tensor_cores_j").get<double>(), 0);
  EXPECT_DOUBLE_EQ(tc.at("energy_j").get<double>(),
                   e.at("sparse_cores_j").get<double>() + e.at("tensor_cores_j").get<double>());
  EXPECT_EQ(host.at("energy").at("sparse_cores_j"), e.at("sparse_cores_j"));
  EXPECT_FALSE(host.at("energy").contains("tensor_cores_j"));
  EXPECT_FALSE(host.contains("energy_j"));
}

}  // namespace
