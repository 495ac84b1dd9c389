// Timing properties of the timed core, swept over configurations.
#include <cmath>

#include <gtest/gtest.h>

#include "core/fault.h"
#include "core_test_util.h"

namespace tessera::core {
namespace {

TEST(Timing, IndependentBundlesIssueOnePerCycle) {
  for (const CoreSpec& spec : {test::small_spec(), test::default_spec()}) {
    auto c = test::run_timed(spec, R"(
  sli s1, 1 ;; sli s2, 2 ;; vbcasti v1, 3 ;; vbcasti v2, 4
  sadd s3, s1, s1 ;; vadd.s32 v3, v5, v5
  sadd s4, s2, s2 ;; vadd.s32 v4, v6, v6
  halt
)");
    EXPECT_EQ(c->bundles(), 4);
    EXPECT_EQ(c->stats().get("stalls.total"), 0);
    // halt issues at cycle 3; the vadd issued at 2 is ready at 2 + latency (the run drains it).
    EXPECT_EQ(c->cycles(), std::max<int64_t>(4, 2 + spec.latency_of(isa::LatencyClass::VecAdd)));
  }
}

TEST(Timing, DependentVectorAddsStallLatencyMinusOneCycles) {
  for (int lat : {1, 2, 3, 5, 9})
    for (bool big : {false, true}) {
      const nlohmann::json patch = {{"latency", {{"vector_add", lat}}}};
      const CoreSpec spec = big ? test::default_spec(patch) : test::small_spec(patch);
      auto c = test::run_timed(spec, R"(
  vbcasti v1, 1
  vadd.s32 v2, v1, v1
  vadd.s32 v3, v2, v2
  vadd.s32 v4, v3, v3
  halt
)");
      EXPECT_EQ(c->stall_cycles(StallCause::Dependency), 3 * (lat - 1)) << lat;
      EXPECT_EQ(c->stats().get("stalls.total"), 3 * (lat - 1));
    }
}

TEST(Timing, MultiplyAndScalarLatenciesComeFromTheirClasses) {
  for (int lat : {1, 4, 7}) {
    const CoreSpec spec = test::small_spec(
        {{"latency", {{"vector_mul", lat}, {"scalar_mul", lat + 1}, {"scalar_mem", lat + 2}}}});
    auto c = test::run_timed(spec, R"(
  vbcasti v1, 1 ;; sli s1, 3
  nop
  vmul.f32 v2, v1, v1 ;; smul s2, s1, s1
  vadd.f32 v3, v2, v2
  sadd s3, s2, s2
  sld s4, [s3+0]
  sadd s5, s4, s4
  halt
)");
    // vmul/smul issue at 2; vadd waits for v2 until 2 + lat (lat - 1 stall cycles); sadd (s2 at
    // 3 + lat) then issues without a stall; sld at 4 + lat, so s4 is ready at 6 + 2 lat and its
    // consumer, due at 5 + lat, waits lat + 1.
    const int64_t want = 2 * lat;
    EXPECT_EQ(c->stall_cycles(StallCause::Dependency), want) << lat;
  }
}

TEST(Timing, TakenBranchCostsItsLatencyMinusOne) {
  for (int lat : {1, 2, 4}) {
    const CoreSpec spec = test::small_spec({{"latency", {{"branch", lat}}}});
    auto c = test::run_timed(spec, R"(
  sli s1, 4
top:
  loop s1, top
  halt
)");
    EXPECT_EQ(c->stall_cycles(StallCause::Branch), 3 * (lat - 1))
        << lat;  // 3 taken, 1 falls through
  }
}

// Cycles from a dma.hv issue to the first bundle that may use its flag.
int64_t dma_time(const CoreSpec& spec, int words) {
  const std::string text = "sli s1, 0 ;; sli s2, " + std::to_string(words) + R"(
  smfsr s10, %cycle_lo ;; dma.hv s1, s1, s2, 1
  wait 1, 1
  smfsr s11, %cycle_lo
  halt
)";
  auto c = test::run_timed(spec, text);
  return static_cast<int64_t>(c->state().sreg(11)) - 1 - c->state().sreg(10);
}

TEST(Timing, DmaTakesLatencyPlusBytesOverBandwidth) {
  for (int latency : {5, 20, 100})
    for (double bw : {4.0, 16.0, 7.5})
      for (int words : {1, 64, 1000}) {
        const CoreSpec spec =
            test::small_spec({{"dma", {{"latency", latency}}}, {"hbm", {{"bytes_per_cycle", bw}}}});
        EXPECT_EQ(dma_time(spec, words), latency + static_cast<int64_t>(std::ceil(words * 4 / bw)))
            << latency << " " << bw << " " << words;
      }
}

TEST(Timing, DmaRequestsShareTheBandwidthInIssueOrder) {
  const CoreSpec spec =
      test::small_spec({{"dma", {{"latency", 10}}}, {"hbm", {{"bytes_per_cycle", 8}}}});
  // Two 400-byte requests issued on consecutive cycles 2 and 3: the second's data follows the
  // first's (ends 2 + 10 + 50 = 62), so it completes at 62 + 50 = 112.
  auto c = test::run_timed(spec, R"(
  sli s1, 0 ;; sli s2, 100
  sli s3, 200
  dma.hv s1, s1, s2, 1
  dma.hv s3, s3, s2, 2
  wait 2, 1
  smfsr s11, %cycle_lo
  halt
)");
  EXPECT_EQ(c->state().sreg(11), 113u);  // the wait issues at 112, the smfsr at 113
  EXPECT_EQ(c->stall_cycles(StallCause::SyncWait), 112 - 4);
}

TEST(Timing, AFullDmaQueueStallsTheNextRequestUntilTheOldestCompletes) {
  for (int q : {1, 2, 3}) {
    const CoreSpec spec = test::small_spec(
        {{"dma", {{"latency", 30}, {"queue", q}}}, {"hbm", {{"bytes_per_cycle", 4}}}});
    std::string text = "sli s1, 0 ;; sli s2, 1\n";
    for (int i = 0; i <= q; ++i) text += "  dma.hv s1, s1, s2, 1\n";
    text += "  halt\n";
    auto c = test::run_timed(spec, text);
    // request 0 issues at 1 and completes at 1 + 30 + 1 = 32; request q waits for it.
    EXPECT_EQ(c->stall_cycles(StallCause::DmaQueue), 32 - (1 + q)) << q;
  }
}

TEST(Timing, EupAcceptsOneVregPerSublanesCyclesAndPopWaitsForTheResult) {
  for (int sub : {1, 2, 4, 8}) {
    const CoreSpec spec = test::small_spec(
        {{"vector", {{"sublanes", sub}}}, {"mxu", {{"rows", 8}}}, {"xu", {{"fifo", 8}}}});
    auto c = test::run_timed(spec, R"(
  vbcasti v1, 1.0f
  eexp v1
  eexp v1
  epop v2
  epop v3
  halt
)");
    const int lat = spec.latency_of(isa::LatencyClass::Eup);
    // second push waits sub - 1; the first result is ready at 1 + sub - 1 + lat, pop issue >= 3.
    EXPECT_EQ(c->stall_cycles(StallCause::EupBusy), sub - 1) << sub;
    const int64_t first_pop = std::max<int64_t>(2 + sub, 1 + sub - 1 + lat);
    const int64_t second_pop = std::max<int64_t>(first_pop + 1, 1 + sub + sub - 1 + lat);
    EXPECT_EQ(c->stall_cycles(StallCause::EupResult),
              (first_pop - (2 + sub)) + (second_pop - first_pop - 1))
        << sub;
  }
}

TEST(Timing, EupFifoHoldsExactlyItsDepthOfUnpoppedResults) {
  for (int depth : {1, 2, 4, 7}) {
    const CoreSpec spec = test::small_spec({{"eup", {{"fifo", depth}}}});
    std::string fill = "vbcasti v1, 2.0f\n";
    for (int i = 0; i < depth; ++i) fill += "  esqrt v1\n";
    EXPECT_NO_THROW(test::run_timed(spec, fill + "  halt\n")) << depth;
    EXPECT_NO_THROW(test::run_timed(spec, fill + "  epop v2\n  esqrt v1\n  halt\n")) << depth;
    EXPECT_THROW(test::run_timed(spec, fill + "  esqrt v1\n  halt\n"), SimFault) << depth;
    EXPECT_THROW(test::run_functional(spec, fill + "  esqrt v1\n  halt\n"), SimFault) << depth;
  }
}

TEST(Timing, RngMakesWordsPerCycleAndBackToBackRngsWaitForTheGenerator) {
  for (int wpc : {16, 128, 512}) {
    const CoreSpec spec = test::default_spec({{"rng", {{"words_per_cycle", wpc}}}});
    auto c = test::run_timed(spec, "rng v1\n  rng v2\n  rng v3\n  halt\n");
    const int occ = (1024 + wpc - 1) / wpc;  // 8 x 128 words
    EXPECT_EQ(c->stall_cycles(StallCause::RngBusy), 2 * (occ - 1)) << wpc;
    EXPECT_EQ(c->unit_busy_cycles(isa::Unit::Rng), 3 * occ) << wpc;
  }
}

TEST(Timing, MflipWaitsUntilTheWholeTileHasShiftedIn) {
  for (bool big : {false, true}) {
    const CoreSpec spec = big ? test::default_spec() : test::small_spec();
    const int pushes = spec.mxu_rows / spec.sublanes;
    std::string text = "vbcasti v1, 1.0f\n  nop\n";
    for (int i = 0; i < pushes; ++i) text += "  mlw v1\n";
    text += "  mflip ;; smfsr s1, %cycle_lo\n  halt\n";
    auto c = test::run_timed(spec, text);
    // the first mlw issues at 2; the tile has shifted in R cycles later
    EXPECT_EQ(c->state().sreg(1), static_cast<uint32_t>(2 + spec.mxu_rows)) << big;
    EXPECT_EQ(c->stall_cycles(StallCause::MxuBusy) + c->stall_cycles(StallCause::MxuWeights),
              spec.mxu_rows - pushes)
        << big;
    EXPECT_EQ(c->stats().get("stalls.total"), spec.mxu_rows - pushes) << big;
  }
}

TEST(Timing, EveryStallCycleIsChargedToExactlyOneCause) {
  const CoreSpec spec = test::small_spec();
  auto c = test::run_timed(spec, R"(
  vbcasti v1, 1.0f ;; sli s1, 0 ;; sli s2, 8
  sli s3, 3
  vmul.f32 v2, v1, v1 ;; dma.hv s1, s1, s2, 0
  vadd.f32 v3, v2, v2 ;; eexp v2
  epop v4 ;; eexp v3
  epop v5 ;; rng v6
top:
  rng v7
  loop s3, top
  wait 0, 1
  halt
)");
  const auto st = c->stats();
  double sum = 0;
  for (int k = 1; k < kNumStallCauses; ++k)
    sum += st.get(std::string("stalls.") + std::string(to_string(static_cast<StallCause>(k))));
  EXPECT_EQ(sum, st.get("stalls.total"));
  EXPECT_EQ(c->cycles(),
            c->bundles() + static_cast<int64_t>(sum));  // nothing left to drain after halt
}

}  // namespace
}  // namespace tessera::core
