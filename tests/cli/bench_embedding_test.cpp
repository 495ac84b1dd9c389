// `tessera bench embedding`: the bound and the efficiency by hand on round figures, the values
// check, the Zipf draw's skew, the errors, and the CLI's JSON.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/bench/embedding_bench.h"
#include "common/config.h"
#include "core/spec.h"
#include "support/cli_run.h"
#include "support/error_of.h"

namespace tessera::bench {
namespace {

// Requests of 64 B at 64 B per cycle (x = 1), latency 10, 32 outstanding: the row stream is
// bandwidth-bound; one 16-word row is one request.
core::CoreSpec round_spec(int outstanding = 32) {
  const nlohmann::json root = {{"core",
                                {{"hbm", {{"bytes", 1 << 24}}},
                                 {"sparse",
                                  {{"hbm_request_bytes", 64},
                                   {"hbm_bytes_per_cycle", 64},
                                   {"hbm_latency", 10},
                                   {"hbm_outstanding", outstanding},
                                   {"ids_per_cycle", 4},
                                   {"simd_width", 16}}}}}};
  ConfigReader r = ConfigReader::from_string(root.dump(), "<round>");
  core::CoreSpec s = core::read_core_spec(r);
  r.finish();
  return s;
}

TEST(EmbeddingBench, TheBoundIsTheRowBytesOverTheHbmBandwidth) {
  const core::CoreSpec spec = round_spec();
  const EmbeddingBenchShape shape{2, 1000, 16, 4, 8, 1.0, 3};
  const EmbeddingBenchResult r = run_embedding_bench(spec, shape);
  EXPECT_EQ(r.lookups, 2 * 8 * 4);
  EXPECT_EQ(r.row_bytes, 64 * 64);
  EXPECT_DOUBLE_EQ(r.bound_seconds, 64.0 / spec.clock_hz);
  EXPECT_DOUBLE_EQ(r.sim_seconds, static_cast<double>(r.sim_cycles) / spec.clock_hz);
  EXPECT_DOUBLE_EQ(r.efficiency, r.bound_seconds / r.sim_seconds);
  EXPECT_LT(r.efficiency, 1.0);
  EXPECT_STREQ(r.row_stream_limit, "bandwidth");
  EXPECT_TRUE(r.values_checked);
  EXPECT_STREQ(run_embedding_bench(round_spec(1), shape).row_stream_limit, "outstanding");
}

TEST(EmbeddingBench, LargeBatchesApproachTheBoundWhenBandwidthBinds) {
  const EmbeddingBenchResult r =
      run_embedding_bench(round_spec(), EmbeddingBenchShape{1, 100000, 16, 16, 512, 1.05, 0});
  EXPECT_GT(r.efficiency, 0.8);
}

TEST(EmbeddingBench, BadShapesAreErrors) {
  using testing::error_of;
  EmbeddingBenchShape s;
  s.bag = 0;
  EXPECT_NE(error_of([&] { run_embedding_bench(round_spec(), s); }).find("must be >= 1"),
            std::string::npos);
  s = EmbeddingBenchShape{};
  s.zipf = -1;
  EXPECT_NE(error_of([&] { run_embedding_bench(round_spec(), s); }).find("--zipf"),
            std::string::npos);
  s = EmbeddingBenchShape{};
  s.rows = 1 << 30;
  EXPECT_NE(error_of([&] { run_embedding_bench(round_spec(), s); }).find("do not fit"),
            std::string::npos);
}

TEST(EmbeddingBenchCli, JsonCarriesTheFigures) {
  if (!testing::cli_binary_exists()) GTEST_SKIP() << "tessera not built";
  const auto r =
      testing::run_cli("bench embedding --tables 1 --rows 1000 --dim 8 --bag 4 --batch 16 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  for (const char* key :
       {"sim_seconds", "bound_seconds", "efficiency", "lookups_per_sim_second", "host_seconds"})
    EXPECT_GT(j.at(key).get<double>(), 0) << key;
  EXPECT_EQ(j.at("lookups").get<int64_t>(), 64);
  EXPECT_NE(testing::run_cli("bench embedding --chips 2").status, 0);
}

}  // namespace
}  // namespace tessera::bench
