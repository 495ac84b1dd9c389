#include "numerics/bf16.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace tessera::numerics {
namespace {

float from_bits(uint32_t u) {
  return std::bit_cast<float>(u);
}
uint32_t to_bits(float f) {
  return std::bit_cast<uint32_t>(f);
}

// Exact RNE to 8 significant bits, computed from the value with long double arithmetic (an oracle
// independent of the bit trick under test).
uint16_t oracle_bf16(float f) {
  if (std::isnan(f)) return static_cast<uint16_t>((to_bits(f) >> 16) | 0x40);
  if (std::isinf(f) || f == 0.0f) return static_cast<uint16_t>(to_bits(f) >> 16);
  const uint32_t lo = to_bits(f) & 0xffff0000u;  // truncation toward zero
  const uint32_t hi = lo + 0x10000u;             // next bf16 away from zero
  const long double d = std::fabs(static_cast<long double>(f));
  const long double dl = std::fabs(static_cast<long double>(from_bits(lo)));
  // hi may be +-inf when lo is the largest finite bf16: its "value" is then 2^128.
  const long double dh = ((hi & 0x7fffffffu) == 0x7f800000u)
                             ? std::ldexp(1.0L, 128)
                             : std::fabs(static_cast<long double>(from_bits(hi)));
  const long double below = d - dl, above = dh - d;
  uint32_t pick;
  if (below < above)
    pick = lo;
  else if (above < below)
    pick = hi;
  else
    pick = ((lo >> 16) & 1u) ? hi : lo;  // tie: even
  return static_cast<uint16_t>(pick >> 16);
}

TEST(Bf16, EveryBf16ValueRoundTripsExactly) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const Bf16 x = Bf16::from_bits(static_cast<uint16_t>(b));
    const float f = bf16_to_f32(x);
    ASSERT_EQ(to_bits(f), b << 16);
    const Bf16 back = bf16_from_f32(f);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(bf16_to_f32(back))) << b;
      ASSERT_EQ(back.bits & 0x8000, b & 0x8000) << "NaN keeps its sign";
      ASSERT_NE(back.bits & 0x0040, 0) << "NaN comes out quiet";
    } else {
      ASSERT_EQ(back.bits, b) << "bf16 value " << b << " must survive fp32 -> bf16 unchanged";
    }
  }
}

// Every bf16 value b, plus each class of the 16 dropped bits: below half, exactly half (tie),
// above half, and the extremes. Covers ties to even from both parities, carries into the
// exponent, overflow to infinity, subnormals, and both signs.
TEST(Bf16, EveryTieClassRoundsToNearestEven) {
  const uint32_t tails[] = {0x0000, 0x0001, 0x3fff, 0x7fff, 0x8000, 0x8001, 0xbfff, 0xffff};
  for (uint32_t b = 0; b < 65536; ++b) {
    for (uint32_t t : tails) {
      const uint32_t u = (b << 16) | t;
      const float f = from_bits(u);
      const uint16_t got = bf16_from_f32(f).bits;
      if (std::isnan(f)) {
        ASSERT_TRUE(std::isnan(bf16_to_f32(Bf16{got})));
        continue;
      }
      ASSERT_EQ(got, oracle_bf16(f)) << std::hex << "input 0x" << u;
    }
  }
}

TEST(Bf16, SpecialValuesArePreserved) {
  EXPECT_EQ(bf16_from_f32(0.0f).bits, 0x0000);
  EXPECT_EQ(bf16_from_f32(-0.0f).bits, 0x8000);
  EXPECT_EQ(bf16_from_f32(std::numeric_limits<float>::infinity()).bits, 0x7f80);
  EXPECT_EQ(bf16_from_f32(-std::numeric_limits<float>::infinity()).bits, 0xff80);
  // A signalling NaN whose payload lives only in the low 16 bits must not become infinity.
  EXPECT_EQ(bf16_from_f32(from_bits(0x7f800001u)).bits, 0x7fc0);
  EXPECT_EQ(bf16_from_f32(from_bits(0xff800001u)).bits, 0xffc0);
  // Largest finite float rounds up to infinity (RNE overflow); largest bf16 stays.
  EXPECT_EQ(bf16_from_f32(std::numeric_limits<float>::max()).bits, 0x7f80);
  EXPECT_EQ(bf16_from_f32(from_bits(0x7f7f0000u)).bits, 0x7f7f);
  // Subnormals are kept: the smallest bf16 subnormal survives, half of it ties to zero (even).
  EXPECT_EQ(bf16_from_f32(from_bits(0x00010000u)).bits, 0x0001);
  EXPECT_EQ(bf16_from_f32(from_bits(0x00008000u)).bits, 0x0000);
  EXPECT_EQ(bf16_from_f32(from_bits(0x00018000u)).bits, 0x0002);
}

TEST(Bf16, ArrayRoundingMatchesScalarRounding) {
  std::mt19937 rng(7);
  std::vector<float> x(100000);
  for (auto& v : x) v = from_bits(static_cast<uint32_t>(rng()));
  std::vector<float> y = x;
  round_to_bf16(y.data(), static_cast<long>(y.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = round_to_bf16(x[i]);
    ASSERT_EQ(to_bits(y[i]), to_bits(want)) << i;
  }
}

}  // namespace
}  // namespace tessera::numerics
