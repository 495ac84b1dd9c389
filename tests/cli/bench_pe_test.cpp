// `tessera bench pe`: runs the built `tessera` executable (skipped when it has not been built in
// this build tree) and checks the JSON it prints. No timing assertions: only that the figures
// exist and agree with each other and with the simulated tile.
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/cli_run.h"

namespace {

using tessera::testing::run_cli;

class BenchPeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!tessera::testing::cli_binary_exists()) GTEST_SKIP() << "tessera not built";
  }
};

nlohmann::json bench(const std::string& extra) {
  const auto r = run_cli("bench pe --m 16 --k 64 --n 16 --reps 1 --json" + extra);
  EXPECT_EQ(r.status, 0) << r.out;
  return nlohmann::json::parse(r.out);
}

TEST_F(BenchPeCli, JsonHasBothRatesTheirRatioAndTheTileFigures) {
  const nlohmann::json j = bench("");
  const double term = j.at("term_host_seconds"), bf16 = j.at("bf16_host_seconds");
  EXPECT_GT(term, 0.0);
  EXPECT_GT(bf16, 0.0);
  EXPECT_DOUBLE_EQ(j.at("ratio").get<double>(), bf16 / term);
  EXPECT_TRUE(j.at("fixed_exponent").is_null());
  EXPECT_EQ(j.at("bf16_cycles_equal_pe"), 4 * 8);     // 2 x 2 blocks of 8 x 8 PEs, 64 / 8 steps
  EXPECT_GE(j.at("tile_cycles").get<int64_t>(), 32);  // every step lasts at least one cycle
}

// A fixed exponent far above the products (about 2^-5 here) puts most terms out of bounds.
TEST_F(BenchPeCli, FixedExponentAboveTheProductsSkipsTermsOutOfBounds) {
  const nlohmann::json dynamic = bench(""), fixed = bench(" --fixed-exponent 20");
  EXPECT_EQ(fixed.at("fixed_exponent"), 20);
  EXPECT_GT(fixed.at("skipped_oob_fraction").get<double>(), 0.1);
  EXPECT_LT(dynamic.at("skipped_oob_fraction").get<double>(), 0.01);
  EXPECT_LT(fixed.at("tile_cycles").get<int64_t>(), dynamic.at("tile_cycles").get<int64_t>());
}

// --vector-isa caps the host vector paths: the same tile figures at every setting, and the JSON
// says which paths ran (at most the cap; lower where the host lacks the instructions).
TEST_F(BenchPeCli, EveryVectorIsaGivesTheSameTileFigures) {
  nlohmann::json first;
  for (const std::string isa : {"auto", "avx512", "avx2", "portable"}) {
    const auto r =
        run_cli("--vector-isa " + isa + " bench pe --m 16 --k 64 --n 16 --reps 1 --json");
    ASSERT_EQ(r.status, 0) << isa;
    nlohmann::json j = nlohmann::json::parse(r.out);
    const std::string used = j.at("vector_isa");
    if (isa == "avx2") {
      EXPECT_NE(used, "avx512");
    }
    if (isa == "portable") {
      EXPECT_EQ(used, "portable");
    }
    for (const char* host : {"term_host_seconds", "bf16_host_seconds", "term_macs_per_s",
                             "bf16_macs_per_s", "ratio", "vector_isa"})
      j.erase(host);
    if (first.is_null()) first = j;
    EXPECT_EQ(j, first) << isa;
  }
}

// The app's option also after the command.
TEST_F(BenchPeCli, VectorIsaAfterTheCommand) {
  const auto r = run_cli("bench pe --m 16 --k 64 --n 16 --reps 1 --json --vector-isa portable");
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(nlohmann::json::parse(r.out).at("vector_isa"), "portable");
}

TEST_F(BenchPeCli, UnknownVectorIsa_bad) {
  const auto r = run_cli("--vector-isa sse bench pe --m 8 --k 8 --n 8", true);
  EXPECT_EQ(r.status >> 8, 2);
  EXPECT_NE(r.out.find("--vector-isa"), std::string::npos) << r.out;
}

TEST_F(BenchPeCli, FixedExponentOutOfRange_bad) {
  const std::pair<std::string, std::string> cases[] = {
      {"--fixed-exponent 999", "--fixed-exponent: 999 is out of range [-400, 400]"},
      {"--acc-width 999", "--acc-width: 999 is out of range [4, 100]"}};
  for (const auto& [flag, message] : cases) {
    const auto r = run_cli("bench pe --m 8 --k 8 --n 8 " + flag, true);
    EXPECT_EQ(r.status >> 8, 2) << flag;  // a flag value the command refuses
    EXPECT_EQ(r.out, "tessera: error: " + message + "\n");
  }
}

}  // namespace
