// `tessera bench allreduce --json`: the spans of its supersteps (system/system.h SuperstepSpan)
// follow one another on the simulated clock: one entry per superstep, arrived <= posted <=
// delivered <= released within each, a superstep's arrival not before the previous release, the
// last release not after the simulated end; the exchange phases add up to exchange_seconds.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/cli_run.h"

namespace {

using tessera::testing::run_cli;

class BenchAllReduceCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!tessera::testing::cli_binary_exists()) GTEST_SKIP() << "tessera not built";
  }
};

TEST_F(BenchAllReduceCli, SuperstepSpansFollowEachOtherOnTheSimulatedClock) {
  for (const std::string topology : {"ring", "line"}) {
    const auto r =
        run_cli("bench allreduce --chips 4 --bytes 65536 --topology " + topology + " --json");
    ASSERT_EQ(r.status, 0) << r.out;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    const nlohmann::json& s = j.at("superstep_spans");
    const size_t n = j.at("supersteps").get<size_t>();
    for (const char* k : {"arrived", "posted", "delivered", "released"})
      ASSERT_EQ(s.at(k).size(), n) << k;
    double previous = 0, exchange = 0;
    for (size_t i = 0; i < n; ++i) {
      const double a = s["arrived"][i], p = s["posted"][i], d = s["delivered"][i],
                   e = s["released"][i];
      EXPECT_LE(previous, a) << i;
      EXPECT_LE(a, p) << i;
      EXPECT_LE(p, d) << i;
      EXPECT_LE(d, e) << i;
      exchange += d - p;
      previous = e;
    }
    EXPECT_LE(previous, j.at("sim_seconds").get<double>() * (1 + 1e-12));
    EXPECT_NEAR(exchange, j.at("exchange_seconds").get<double>(), 1e-15 * n + 1e-12 * exchange);
  }
}

}  // namespace
