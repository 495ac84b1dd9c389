// `tessera bench fabric --threads T --json`: the fabric's partitions on T host threads simulate
// the same ring all-reduce: every figure but the host's is identical for T = 1, 2 and 3, with
// packet loss, and the partitions ran in windows only when T >= 2.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/cli_run.h"

namespace {

using tessera::testing::run_cli;

class BenchFabricCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!tessera::testing::cli_binary_exists()) GTEST_SKIP() << "tessera not built";
  }
};

TEST_F(BenchFabricCli, ThreadsChangeOnlyTheHostFigures) {
  const std::string base =
      "bench fabric --chips 16 --topology torus2d --bytes 262144 --directions 2 --loss 0.05 --json";
  nlohmann::json first;
  for (const int threads : {1, 2, 3}) {
    const auto r = run_cli(base + " --threads " + std::to_string(threads));
    ASSERT_EQ(r.status, 0) << r.out;
    nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j.at("threads"), threads);
    if (threads == 1)
      EXPECT_EQ(j.at("exchange_windows"), 0);
    else
      EXPECT_GT(j.at("exchange_windows").get<int64_t>(), 0);
    for (const char* host : {"threads", "host_seconds", "host_wall_seconds", "exchange_windows",
                             "packets_per_host_second", "events_per_host_second"})
      j.erase(host);
    if (threads == 1)
      first = j;
    else
      EXPECT_EQ(j, first) << "threads " << threads;
  }
  EXPECT_GT(first.at("packets").get<int64_t>(), 0);
}

TEST_F(BenchFabricCli, ZeroThreadsIsAUsageError_bad) {
  const auto r = run_cli("bench fabric --chips 4 --threads 0", true);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("threads"), std::string::npos) << r.out;
}

}  // namespace
