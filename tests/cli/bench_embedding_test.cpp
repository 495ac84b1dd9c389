// `tessera bench embedding`: the bound and the efficiency by hand on round figures (one chip and
// several), the values check, the errors, and the CLI's JSON.
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

// The built-in estimates (configs/tpu-v2-like.json's): enough requests in flight and SIMD lanes
// for the row stream to run at the HBM bandwidth; one table of the default batch, bag and dim
// (each of the default's 8 gathers is the same) is above 0.8 of its bound.
TEST(EmbeddingBench, TheBuiltInEstimatesKeepTheRowStreamAtTheBandwidth) {
  ConfigReader r = ConfigReader::from_string("{}", "<built-in>");
  const core::CoreSpec spec = core::read_core_spec(r);
  EmbeddingBenchShape shape;
  shape.tables = 1;
  shape.rows = 100000;
  const EmbeddingBenchResult e = run_embedding_bench(spec, shape);
  EXPECT_STREQ(e.row_stream_limit, "bandwidth");
  EXPECT_GT(e.efficiency, 0.8);
}

TEST(EmbeddingBench, LargeBatchesApproachTheBoundWhenBandwidthBinds) {
  const EmbeddingBenchResult r =
      run_embedding_bench(round_spec(), EmbeddingBenchShape{1, 100000, 16, 16, 512, 1.05, 0});
  EXPECT_GT(r.efficiency, 0.8);
}

// Two chips on a line of the built-in system: the bound is the HBM part (owners' rows and the
// rows received, over the HBM bandwidth) plus the exchange part (the busiest link's bytes over
// the link bandwidth and two one-hop latencies); the values are checked on every processor.
TEST(EmbeddingBench, SeveralChipsBoundTheHbmAndTheBusiestLink) {
  const core::CoreSpec spec = round_spec();
  system::SystemSpec sys;
  sys.chips = sys.chips_per_board = 2;
  const EmbeddingBenchShape shape{2, 1000, 16, 4, 8, 1.0, 3};
  for (const system::ShardPlacement p :
       {system::ShardPlacement::kMod, system::ShardPlacement::kTable}) {
    const EmbeddingBenchResult r = run_sharded_embedding_bench(spec, sys, shape, p);
    EXPECT_EQ(r.processors, 2);
    EXPECT_EQ(r.lookups, 2 * 2 * 8 * 4);
    EXPECT_EQ(r.row_bytes, r.lookups * 64);
    EXPECT_TRUE(r.values_checked);
    EXPECT_EQ(r.max_hops, 1);
    EXPECT_DOUBLE_EQ(r.exchange_bound_seconds,
                     static_cast<double>(r.busiest_link_bytes) / (sys.link_gbytes_per_s * 1e9) +
                         2 * sys.link_latency_ns * 1e-9);
    EXPECT_DOUBLE_EQ(r.bound_seconds, r.hbm_bound_seconds + r.exchange_bound_seconds);
    EXPECT_GT(r.hbm_bound_seconds, 0);
    EXPECT_LT(r.efficiency, 1.0);
    EXPECT_GT(r.efficiency, 0.0);
  }
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
  EXPECT_NE(testing::run_cli("bench embedding --chips 0").status, 0);
  EXPECT_NE(testing::run_cli("bench embedding --chips 2 --placement rows").status, 0);
}

TEST(EmbeddingBenchCli, SeveralChipsSpreadTheTablesAndReportTheExchange) {
  if (!testing::cli_binary_exists()) GTEST_SKIP() << "tessera not built";
  const auto r = testing::run_cli(
      "bench embedding --chips 4 --tables 2 --rows 1001 --dim 8 --bag 4 --batch 16 --threads 2 "
      "--json");
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("processors").get<int>(), 4);
  EXPECT_EQ(j.at("lookups").get<int64_t>(), 4 * 2 * 16 * 4);
  EXPECT_TRUE(j.at("values_checked").get<bool>());
  EXPECT_GT(j.at("exchange").at("row_bytes").get<int64_t>(), 0);
  EXPECT_DOUBLE_EQ(
      j.at("bound_seconds").get<double>(),
      j.at("hbm_bound_seconds").get<double>() + j.at("exchange_bound_seconds").get<double>());
}

}  // namespace
}  // namespace tessera::bench
