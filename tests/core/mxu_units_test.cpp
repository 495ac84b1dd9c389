// core.mxu.count: several MXUs, each with its own weights, accumulators, result FIFO and counters,
// addressed by the ops' MXU index; hand-counted cycles of two MXUs working in parallel.
#include <gtest/gtest.h>

#include "common/error.h"
#include "core/core_test_util.h"
#include "core/fault.h"

namespace tessera::core {
namespace {

CoreSpec two_mxus() {
  return test::small_spec({{"mxu", {{"count", 2}}}});
}

std::string config_error(const nlohmann::json& patch) {
  try {
    test::small_spec(patch);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Small machine: 2 sublanes, 8 x 8 arrays. An mlw shifts S = 2 rows in 2 cycles, so a tile takes
// R = 8 cycles on each MXU, and both shift at once. The first mlws issue at cycle 2 (vbcasti's
// latency); both tiles are in at 2 + 8 = 10, where both mflips issue. The mmuls issue together at
// 11; each row's last column leaves R + C - 2 = 14 cycles after it entered, the second row enters
// at 12, so both blocks may be popped from 12 + 14 + 1 = 27.
constexpr const char* kParallel = R"(
  vbcasti v1, 1.0f ;; vbcasti v2, 2.0f
  nop
  mlw v1 ;; mlw v2, mxu1
  mlw v1 ;; mlw v2, mxu1
  mlw v1 ;; mlw v2, mxu1
  mlw v1 ;; mlw v2, mxu1
  mflip ;; mflip mxu1 ;; smfsr s1, %cycle_lo
  mmul v1 ;; mmul v1, mxu1
  mpop v3 ;; mpop v4, mxu1 ;; smfsr s2, %cycle_lo
  halt
)";

TEST(MxuUnits, TwoMxusLoadAndMultiplyInParallel) {
  const CoreSpec spec = two_mxus();
  auto c = test::run_timed(spec, kParallel);
  EXPECT_EQ(c->state().sreg(1), 10u);
  EXPECT_EQ(c->state().sreg(2), 27u);
  auto f = test::run_functional(spec, kParallel);
  // MXU 0 holds ones, MXU 1 twos: a row of ones gives 8 and 16 in every column
  for (const ArchState* s : std::initializer_list<const ArchState*>{&c->state(), &f->state()})
    for (int i = 0; i < spec.mxu_cols; ++i) {
      EXPECT_EQ(test::fl(s->vreg(3)[i]), 8.0f) << i;
      EXPECT_EQ(test::fl(s->vreg(4)[i]), 16.0f) << i;
    }
}

TEST(MxuUnits, OneMxuCannotStageTwoTilesAtOnce) {
  // The same weight rows into one MXU: the second tile waits for the first to be flipped in (mlw
  // into a full staging tile would fault) and shifts from the bundle after the flip's, cycle 11.
  auto c = test::run_timed(test::small_spec(), R"(
  vbcasti v1, 1.0f
  nop
  mlw v1
  mlw v1
  mlw v1
  mlw v1
  mflip
  mlw v1
  mlw v1
  mlw v1
  mlw v1
  mflip ;; smfsr s1, %cycle_lo
  halt
)");
  EXPECT_EQ(c->state().sreg(1), 19u);  // 2 + 8 + 1 + 8: one shift path, one tile after another
}

TEST(MxuUnits, StatisticsArePerMxuPlusTotals) {
  const CoreSpec spec = two_mxus();
  auto c = test::run_timed(spec, kParallel);
  const int64_t macs_per_push = int64_t{spec.sublanes} * spec.mxu_rows * spec.mxu_cols;
  EXPECT_EQ(c->stats().get("mxu.count"), 2);
  EXPECT_EQ(c->stats().get("mxu.mxu0.pushes"), 1);
  EXPECT_EQ(c->stats().get("mxu.mxu1.pushes"), 1);
  EXPECT_EQ(c->stats().get("mxu.pushes"), 2);
  EXPECT_EQ(c->stats().get("mxu.mxu1.weight_rows"), 8);
  EXPECT_EQ(c->stats().get("mxu.weight_rows"), 16);
  EXPECT_EQ(c->stats().get("mxu.macs"), 2 * macs_per_push);
  EXPECT_EQ(c->stats().get("mxu.span"), 26 - 2 + 1);  // first weight row at 2, last result at 26
  const MxuStats total = c->machine().mxu_stats();
  EXPECT_EQ(total.macs, 2 * macs_per_push);
  EXPECT_EQ(c->machine().mxu(1).stats().macs, macs_per_push);
  // utilisation over all MXUs: MACs / (count * R * C * cycles)
  const double peak = 2.0 * spec.mxu_rows * spec.mxu_cols;
  EXPECT_DOUBLE_EQ(c->stats().get("mxu.utilisation"),
                   static_cast<double>(2 * macs_per_push) / (peak * c->cycles()));
  EXPECT_DOUBLE_EQ(c->stats().get("mxu.mxu0.utilisation"),
                   static_cast<double>(macs_per_push) / (peak / 2 * c->cycles()));
}

TEST(MxuUnits, OneMxuReportsNoPerMxuGroups) {
  auto c = test::run_timed(test::small_spec(), "  halt\n");
  EXPECT_FALSE(c->stats().has("mxu.count"));
  EXPECT_FALSE(c->stats().has("mxu.mxu0.pushes"));
}

TEST(MxuUnits, AnMxuIndexBeyondTheCountFaultsAtItsPc_bad) {
  // Assembled for any MXU count (the default), loaded on a core with one.
  const CoreSpec spec = test::small_spec();
  const isa::Program p = isa::assemble("  nop\n  mlw v1, mxu1\n  halt\n");
  Core c(spec, p);
  try {
    c.run();
    FAIL() << "expected a fault";
  } catch (const SimFault& f) {
    EXPECT_EQ(f.pc(), 1);
    EXPECT_NE(std::string(f.what()).find("mlw: MXU 1 does not exist (this configuration has 1)"),
              std::string::npos)
        << f.what();
  }
}

TEST(MxuUnits, CountOutOfRange_bad) {
  EXPECT_EQ(config_error({{"mxu", {{"count", 0}}}}),
            "<small>: key 'core.mxu.count': value 0 is out of range [1, 8] (MXUs)");
  EXPECT_EQ(config_error({{"mxu", {{"count", 9}}}}),
            "<small>: key 'core.mxu.count': value 9 is out of range [1, 8] (MXUs)");
}

TEST(MxuUnits, CountMustBeAnInteger_bad) {
  EXPECT_NE(config_error({{"mxu", {{"count", 1.5}}}}).find("key 'core.mxu.count'"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera::core
