// Properties of the term-serial PE step (numerics/term_pe/term_pe.h), each checked on both models.
#include "numerics/term_pe/term_pe.h"

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.h"
#include "numerics/term_pe/reference.h"

namespace tessera::numerics {
namespace {

Bf16 bf(float f) {
  return bf16_from_f32(f);
}

struct StepRun {
  float value;
  PeAccumulator acc;
  StepStats stats;
};

// One step on both models from the fp32 accumulator value `init`; fails the test if they differ.
StepRun step_both(const PeConfig& cfg, const std::vector<Bf16>& a, const std::vector<Bf16>& b,
                  float init) {
  PeAccumulator fast_acc = accumulator_from_f32(init, cfg), ref_acc = fast_acc;
  const StepStats fast = TermPe(cfg).step(a, b, fast_acc);
  const StepStats ref = reference_step(cfg, a, b, ref_acc);
  EXPECT_EQ(fast_acc, ref_acc) << to_string(fast_acc) << " vs " << to_string(ref_acc);
  EXPECT_EQ(fast, ref);
  return StepRun{accumulator_to_f32(fast_acc, cfg), fast_acc, fast};
}

PeConfig width(int w) {
  PeConfig cfg;
  cfg.acc_fraction_bits = w;
  return cfg;
}

TEST(TermPe, SmallIntegerDotProductIsExact) {
  const std::vector<Bf16> a = {bf(1), bf(-2), bf(3), bf(7), bf(0.5f), bf(-6), bf(9), bf(100)};
  const std::vector<Bf16> b = {bf(5), bf(3), bf(-4), bf(7), bf(8), bf(-0.25f), bf(11), bf(3)};
  const StepRun r = step_both(PeConfig{}, a, b, 10.0f);
  EXPECT_EQ(r.value, 10.0f + 5 - 6 - 12 + 49 + 4 + 1.5f + 99 + 300);
}

TEST(TermPe, CyclesAreTheSlowestLanesTermCount) {
  // B significands: 1.0 = 2^7 (1 term), 1.9921875 = 2^8 - 2^0 (2 terms), 0b10101011 (5 terms).
  const Bf16 five_terms{static_cast<uint16_t>(0x3f80 | (0b10101011 & 0x7f))};
  const std::vector<Bf16> a(8, bf(1.0f));
  std::vector<Bf16> b(8, bf(1.0f));
  b[3] = bf(1.9921875f);
  StepRun r = step_both(PeConfig{}, a, b, 0.0f);
  EXPECT_EQ(r.stats.term_cycles, 2);
  EXPECT_EQ(r.stats.cycles, 2);
  EXPECT_EQ(r.stats.lanes[3], (LaneTerms{2, 6, 0}));
  EXPECT_EQ(r.stats.lanes[0], (LaneTerms{1, 7, 0}));
  b[6] = five_terms;
  r = step_both(PeConfig{}, a, b, 0.0f);
  EXPECT_EQ(r.stats.cycles, 5);
  EXPECT_EQ(r.stats.lanes[6], (LaneTerms{5, 3, 0}));
}

TEST(TermPe, ZeroOperandsProcessNoTermsAndAStepLastsAtLeastMinCycles) {
  PeConfig cfg;
  const std::vector<Bf16> a = {bf(0.0f), bf(3.0f), bf(-0.0f)};
  const std::vector<Bf16> b = {bf(3.0f), bf(0.0f), bf(-0.0f)};
  StepRun r = step_both(cfg, a, b, 1.5f);
  EXPECT_EQ(r.value, 1.5f);
  EXPECT_EQ(r.stats.term_cycles, 0);
  EXPECT_EQ(r.stats.cycles, 1);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(r.stats.lanes[i], (LaneTerms{0, kTermSlots, 0})) << i;
  cfg.min_step_cycles = 0;
  EXPECT_EQ(step_both(cfg, a, b, 1.5f).stats.cycles, 0);
}

// acc = 1.0 (E = 0); lane: 1.0 * 1.0078125 (B = 2^7 + 2^0 in units of 2^-7). The 2^0 term's
// shifted A has its leading bit at 2^-7: in the window for W >= 7, out of bounds for W < 7.
TEST(TermPe, ATermBelowTheWindowIsOutOfBoundsAndSkipped) {
  const std::vector<Bf16> a = {bf(1.0f)}, b = {bf(1.0078125f)};
  StepRun r = step_both(width(8), a, b, 1.0f);
  EXPECT_EQ(r.value, 2.0078125f);
  EXPECT_EQ(r.stats.lanes[0], (LaneTerms{2, 6, 0}));
  r = step_both(width(7), a, b, 1.0f);  // in bounds; 2 + 2^-7 then rounds (tie) to 2.0
  EXPECT_EQ(r.value, 2.0f);
  EXPECT_EQ(r.stats.lanes[0], (LaneTerms{2, 6, 0}));
  r = step_both(width(6), a, b, 1.0f);
  EXPECT_EQ(r.value, 2.0f);
  EXPECT_EQ(r.stats.lanes[0], (LaneTerms{1, 6, 1}));
  EXPECT_EQ(r.stats.term_cycles, 1);
}

// W = 7: 1.9921875 * 1.0078125; the 2^0 term contributes trunc(255 / 2^7) = 1 unit of 2^-7, so
// the window sum is 255 + 1 = 256 units = 2.0 (exact product 2.00775..., whose bf16-width
// rounding is also 2.0).
TEST(TermPe, PartlyCoveredTermsAreTruncatedTowardZero) {
  const StepRun r = step_both(width(7), {bf(1.9921875f)}, {bf(1.0078125f)}, 0.0f);
  EXPECT_EQ(r.value, 2.0f);
  EXPECT_EQ(r.stats.lanes[0], (LaneTerms{2, 6, 0}));
  const StepRun neg = step_both(width(7), {bf(-1.9921875f)}, {bf(1.0078125f)}, 0.0f);
  EXPECT_EQ(neg.value, -2.0f);
  // 1.5 * 1.0078125 = 1.51171875 exactly; the terms 2^7 and 2^0 of B = 129 shift A = 192: 192
  // and trunc(192 / 2^7) = 1 units of 2^-7, i.e. 1.5078125 (the product's 2^-8 bit is lost).
  const StepRun t = step_both(width(7), {bf(1.5f)}, {bf(1.0078125f)}, 0.0f);
  EXPECT_EQ(t.value, 1.5078125f);
}

// W = 4: 1.0 * 1.9375 + 1.0 * 1.0 = 2.9375 = 10.1111b; normalising to 5 significant bits is a
// tie, broken to even: 11.000b = 3.0.
TEST(TermPe, NormalisationRoundsToNearestEven) {
  const StepRun r = step_both(width(4), {bf(1.0f), bf(1.0f)}, {bf(1.9375f), bf(1.0f)}, 0.0f);
  EXPECT_EQ(r.value, 3.0f);
  const StepRun via_acc =
      step_both(width(4), {bf(1.0f), bf(1.0f)}, {bf(1.9375f), bf(1.0625f)}, -0.0625f);
  EXPECT_EQ(via_acc.value, 3.0f);
}

TEST(TermPe, HugeExponentGapSkipsEveryTermOfTheSmallProducts) {
  const std::vector<Bf16> a = {bf(1.0f), bf(std::ldexp(1.0f, -100))};
  const std::vector<Bf16> b = {bf(std::ldexp(1.0f, -120)), bf(std::ldexp(1.5f, -100))};
  const StepRun r = step_both(PeConfig{}, a, b, 1.0f);
  EXPECT_EQ(r.value, 1.0f);
  EXPECT_EQ(r.stats.lanes[0], (LaneTerms{0, 7, 1}));
  EXPECT_EQ(r.stats.lanes[1], (LaneTerms{0, 6, 2}));
  EXPECT_EQ(r.stats.cycles, 1);
}

TEST(TermPe, HugeProductsDropATinyAccumulator) {
  const StepRun r =
      step_both(PeConfig{}, {bf(std::ldexp(1.0f, 100))}, {bf(3.0f)}, std::ldexp(1.0f, -100));
  EXPECT_EQ(r.value, std::ldexp(3.0f, 100));
  // The accumulator's own exponent bounds the window when it is the largest.
  const StepRun cancel =
      step_both(PeConfig{}, {bf(std::ldexp(1.0f, 60)), bf(-std::ldexp(1.0f, 60))},
                {bf(1.0f), bf(1.0f)}, std::ldexp(1.0f, -40));
  EXPECT_EQ(cancel.value, 0.0f);  // 2^-40 is far below the window (LSB 2^37): truncated away
  EXPECT_FALSE(std::signbit(cancel.value));
}

TEST(TermPe, ExponentOverflowGivesSignedInfinity) {
  const float max = std::numeric_limits<float>::max();
  const float bmax = bf16_to_f32(Bf16{0x7f7f});
  StepRun r = step_both(PeConfig{}, {bf(bmax)}, {bf(bmax)}, 0.0f);  // product exponent 254
  EXPECT_EQ(r.acc.kind, PeAccumulator::Kind::Inf);
  EXPECT_EQ(r.value, std::numeric_limits<float>::infinity());
  r = step_both(PeConfig{}, {bf(-bmax)}, {bf(2.0f)}, -max);
  EXPECT_EQ(r.value, -std::numeric_limits<float>::infinity());
  // A wider accumulator exponent keeps the value; the fp32 read-out still overflows, and a later
  // step can bring it back into range.
  PeConfig wide;
  wide.acc_max_exponent = 300;
  r = step_both(wide, {bf(bmax)}, {bf(bmax)}, 0.0f);
  EXPECT_EQ(r.acc.kind, PeAccumulator::Kind::Finite);
  EXPECT_EQ(r.acc.exponent, 255);
  EXPECT_EQ(accumulator_to_f32(r.acc, wide), std::numeric_limits<float>::infinity());
  PeAccumulator back = r.acc;
  TermPe(wide).step(std::vector<Bf16>{bf(-bmax)}, std::vector<Bf16>{bf(bmax)}, back);
  EXPECT_EQ(back.kind, PeAccumulator::Kind::Zero);
}

// W = 4, window LSB 2^122: 31 + 31 + 1 = 63 units = 2^128 - 2^122 < 2^128, which needs 6
// significant bits; rounding to 5 is a tie, to even: 2^128, past acc_max_exponent = 127.
TEST(TermPe, OverflowIsJudgedAfterRounding) {
  const std::vector<Bf16> a = {bf(std::ldexp(1.9375f, 63)), bf(std::ldexp(1.9375f, 63)),
                               bf(std::ldexp(1.0f, 61))};
  const std::vector<Bf16> b = {bf(std::ldexp(1.0f, 63)), bf(std::ldexp(1.0f, 63)),
                               bf(std::ldexp(1.0f, 61))};
  EXPECT_EQ(step_both(width(4), a, b, 0.0f).value, std::numeric_limits<float>::infinity());
  EXPECT_EQ(step_both(width(5), a, b, 0.0f).value, std::ldexp(63.0f, 122));
}

TEST(TermPe, NaNAndInfinitiesFollowIeee) {
  const float inf = std::numeric_limits<float>::infinity();
  const Bf16 nan{0x7fc0};
  EXPECT_TRUE(std::isnan(step_both(PeConfig{}, {nan, bf(1)}, {bf(1), bf(1)}, 0.0f).value));
  EXPECT_TRUE(std::isnan(step_both(PeConfig{}, {bf(inf)}, {bf(0.0f)}, 0.0f).value));  // Inf * 0
  EXPECT_TRUE(std::isnan(step_both(PeConfig{}, {bf(inf), bf(-inf)}, {bf(1), bf(1)}, 0.0f).value));
  EXPECT_TRUE(std::isnan(step_both(PeConfig{}, {bf(inf)}, {bf(1)}, -inf).value));  // Inf - Inf
  EXPECT_TRUE(std::isnan(step_both(PeConfig{}, {bf(1)}, {bf(1)}, std::nanf("")).value));  // sticky
  EXPECT_EQ(step_both(PeConfig{}, {bf(-inf)}, {bf(2)}, 5.0f).value, -inf);
  EXPECT_EQ(step_both(PeConfig{}, {bf(inf)}, {bf(-inf)}, 0.0f).value, -inf);
  EXPECT_EQ(step_both(PeConfig{}, {bf(3)}, {bf(4)}, inf).value, inf);  // Inf stays
  // Finite lanes still do their terms; special lanes do none.
  const StepRun r = step_both(PeConfig{}, {bf(inf), bf(1)}, {bf(1), bf(1.9921875f)}, 0.0f);
  EXPECT_EQ(r.stats.lanes[0], (LaneTerms{0, kTermSlots, 0}));
  EXPECT_EQ(r.stats.lanes[1], (LaneTerms{2, 6, 0}));
  EXPECT_EQ(std::bit_cast<uint32_t>(step_both(PeConfig{}, {nan}, {bf(1)}, 0.0f).value),
            0x7fc00000u);
}

TEST(TermPe, SignedZerosFollowIeee) {
  PeConfig one_lane;
  one_lane.lanes = 1;
  EXPECT_TRUE(std::signbit(step_both(one_lane, {bf(-0.0f)}, {bf(5)}, -0.0f).value));
  EXPECT_FALSE(std::signbit(step_both(one_lane, {bf(0.0f)}, {bf(-5)}, 0.0f).value));
  EXPECT_FALSE(std::signbit(step_both(one_lane, {bf(-0.0f)}, {bf(-5)}, -0.0f).value));
  // Missing lanes are +0 * +0, so an 8-lane PE given one -0 product yields +0.
  EXPECT_FALSE(std::signbit(step_both(PeConfig{}, {bf(-0.0f)}, {bf(5)}, -0.0f).value));
  // x + (-x) = +0.
  const StepRun r = step_both(PeConfig{}, {bf(3), bf(-3)}, {bf(2), bf(2)}, -0.0f);
  EXPECT_EQ(r.value, 0.0f);
  EXPECT_FALSE(std::signbit(r.value));
  EXPECT_FALSE(std::signbit(step_both(PeConfig{}, {bf(3)}, {bf(2)}, -6.0f).value));
}

TEST(TermPe, SubnormalsAreKeptWithHiddenBitZero) {
  const Bf16 min_sub{0x0001};  // 2^-133: significand 1, one term
  StepRun r = step_both(PeConfig{}, {bf(1.0f)}, {min_sub}, 0.0f);
  EXPECT_EQ(r.value, std::ldexp(1.0f, -133));
  EXPECT_EQ(r.stats.lanes[0], (LaneTerms{1, 7, 0}));
  const Bf16 sub{0x0055};  // 0b1010101 * 2^-133: 4 terms
  r = step_both(PeConfig{}, {bf(-2.0f)}, {sub}, 0.0f);
  EXPECT_EQ(r.value, -std::ldexp(85.0f, -132));
  EXPECT_EQ(r.stats.lanes[0], (LaneTerms{4, 4, 0}));
  // Subnormal times subnormal is far below fp32's range: kept inside, rounded to 0 on read-out.
  r = step_both(PeConfig{}, {Bf16{0x007f}}, {Bf16{0x007f}}, 0.0f);
  EXPECT_EQ(r.acc.kind, PeAccumulator::Kind::Finite);
  EXPECT_EQ(r.value, 0.0f);
}

TEST(TermPe, AccumulatorRoundTripsEveryFp32ClassAtFp32Width) {
  std::mt19937 rng(7);
  const PeConfig cfg;
  for (int i = 0; i < 200000; ++i) {
    const uint32_t u = i < 64 ? (i * 0x04000001u) : static_cast<uint32_t>(rng());
    const float f = std::bit_cast<float>(u);
    const float back = accumulator_to_f32(accumulator_from_f32(f, cfg), cfg);
    if (std::isnan(f))
      EXPECT_TRUE(std::isnan(back));
    else
      ASSERT_EQ(std::bit_cast<uint32_t>(back), u) << std::hex << u;
  }
}

// The read-out rounds once: for W <= 52 the state is exactly a double, and double -> float is a
// correctly rounded conversion (subnormals and overflow included), an independent oracle.
TEST(TermPe, ReadOutRoundsOnceToNearestEven) {
  std::mt19937_64 rng(8);
  for (int w : {4, 7, 10, 22, 23, 24, 30, 45, 52}) {
    PeConfig cfg = width(w);
    cfg.acc_max_exponent = 300;
    for (int i = 0; i < 20000; ++i) {
      PeAccumulator acc;
      acc.kind = PeAccumulator::Kind::Finite;
      acc.negative = (rng() & 1) != 0;
      acc.exponent = static_cast<int>(rng() % 320) - 170;
      const uint64_t low = rng() & ((uint64_t{1} << w) - 1);
      acc.significand = (uint64_t{1} << w) | (i % 3 == 0 ? low & ~uint64_t{0xff} : low);
      const double exact =
          std::ldexp(static_cast<double>(static_cast<uint64_t>(acc.significand)), acc.exponent - w);
      const float want = static_cast<float>(acc.negative ? -exact : exact);
      ASSERT_EQ(std::bit_cast<uint32_t>(accumulator_to_f32(acc, cfg)),
                std::bit_cast<uint32_t>(want))
          << to_string(acc) << " W=" << w;
    }
  }
}

TEST(TermPe, NarrowAccumulatorLoadsFp32RoundedToNearestEven) {
  const PeConfig cfg = width(7);
  EXPECT_EQ(accumulator_to_f32(accumulator_from_f32(1.00390625f, cfg), cfg), 1.0f);  // tie, even
  EXPECT_EQ(accumulator_to_f32(accumulator_from_f32(1.01171875f, cfg), cfg), 1.015625f);  // tie, up
  EXPECT_EQ(accumulator_to_f32(accumulator_from_f32(1.999f, cfg), cfg), 2.0f);            // carry
}

TEST(TermPe, BadConfigurationIsRejectedNamingTheField) {
  PeConfig cfg;
  cfg.acc_fraction_bits = 101;
  try {
    TermPe pe(cfg);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "PeConfig.acc_fraction_bits");
    EXPECT_EQ(e.why(), "101 is out of range [4, 100]");
  }
  cfg = PeConfig{};
  cfg.lanes = 0;
  EXPECT_THROW(TermPe{cfg}, Error);
}

}  // namespace
}  // namespace tessera::numerics
