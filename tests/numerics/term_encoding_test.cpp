#include "numerics/term_encoding.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace tessera::numerics {
namespace {

int value_of(const TermList& tl) {
  int v = 0;
  for (int t = 0; t < tl.count; ++t) v += tl.terms[t].sign * (1 << tl.terms[t].power);
  return v;
}

TEST(TermEncoding, EverySignificandReconstructsExactly) {
  for (int m = 0; m < 256; ++m) EXPECT_EQ(value_of(csd_encode(static_cast<uint8_t>(m))), m) << m;
}

TEST(TermEncoding, TermsAreNonAdjacentDescendingSignedPowersInRange) {
  for (int m = 0; m < 256; ++m) {
    const TermList tl = csd_encode(static_cast<uint8_t>(m));
    ASSERT_LE(tl.count, kMaxTerms);
    for (int t = 0; t < tl.count; ++t) {
      EXPECT_TRUE(tl.terms[t].sign == 1 || tl.terms[t].sign == -1) << m;
      EXPECT_GE(tl.terms[t].power, 0) << m;
      EXPECT_LE(tl.terms[t].power, kMaxTermPower) << m;
      if (t > 0) {
        EXPECT_GE(tl.terms[t - 1].power - tl.terms[t].power, 2) << "adjacent digits in " << m;
      }
    }
    EXPECT_TRUE(tl.count == 0 || tl.terms[0].sign == 1) << m;  // a positive value leads with +
  }
}

// Minimality, checked against brute force: every signed-digit vector (digits -1, 0, +1 at powers
// 0..9) is enumerated and the fewest non-zero digits of any vector with value m is recorded.
TEST(TermEncoding, CsdHasTheFewestTermsOfAnySignedDigitForm) {
  std::vector<int> fewest(256, 99);
  int digits[10] = {};
  for (int code = 0; code < 59049; ++code) {  // 3^10
    int c = code, value = 0, weight = 0;
    for (int p = 0; p < 10; ++p, c /= 3) {
      digits[p] = c % 3 - 1;
      value += digits[p] * (1 << p);
      weight += digits[p] != 0;
    }
    if (value >= 0 && value < 256 && weight < fewest[value]) fewest[value] = weight;
  }
  for (int m = 0; m < 256; ++m) EXPECT_EQ(term_count(static_cast<uint8_t>(m)), fewest[m]) << m;
}

// Radix-4 Booth recoding of m (digits -2..2 at powers 4^0..4^4): number of non-zero digits.
int booth4_terms(int m) {
  auto bit = [m](int i) { return i < 0 ? 0 : (m >> i) & 1; };
  int n = 0;
  for (int i = 0; i < 10; i += 2) n += (-2 * bit(i + 1) + bit(i) + bit(i - 1)) != 0;
  return n;
}

// The claims of term_encoding.h's comment on CSD versus radix-4 Booth.
TEST(TermEncoding, CsdNeverNeedsMoreTermsThanRadix4Booth) {
  int more = 0, csd_normal = 0, booth_normal = 0;
  for (int m = 0; m < 256; ++m) {
    const int csd = term_count(static_cast<uint8_t>(m)), booth = booth4_terms(m);
    EXPECT_LE(csd, booth) << m;
    more += booth > csd;
    if (m >= 128) {
      csd_normal += csd;
      booth_normal += booth;
    }
  }
  EXPECT_EQ(more, 93);
  EXPECT_NEAR(csd_normal / 128.0, 3.45, 0.005);
  EXPECT_EQ(booth_normal, 4 * 128);
  EXPECT_EQ(booth4_terms(34), 4);
  EXPECT_EQ(term_count(34), 2);
}

TEST(TermEncoding, TableMatchesTheDigitAlgorithmAndKnownExamples) {
  for (int m = 0; m < 256; ++m) {
    const TermList a = csd_table()[m], b = csd_encode(static_cast<uint8_t>(m));
    ASSERT_EQ(a.count, b.count);
    for (int t = 0; t < a.count; ++t) EXPECT_EQ(a.terms[t], b.terms[t]);
  }
  const TermList t255 = csd_encode(255);  // 2^8 - 2^0
  ASSERT_EQ(t255.count, 2);
  EXPECT_EQ(t255.terms[0], (Term{8, 1}));
  EXPECT_EQ(t255.terms[1], (Term{0, -1}));
  const TermList t120 = csd_encode(0b01111000);  // the spec's example: 2^7 - 2^3
  ASSERT_EQ(t120.count, 2);
  EXPECT_EQ(t120.terms[0], (Term{7, 1}));
  EXPECT_EQ(t120.terms[1], (Term{3, -1}));
  EXPECT_EQ(term_count(0), 0);
  EXPECT_EQ(term_count(128), 1);
  EXPECT_EQ(term_count(0b10101011), 5);
}

TEST(TermEncoding, DecodedFieldsReconstructEveryBf16Value) {
  for (int bits = 0; bits < 65536; ++bits) {
    const Bf16 v{static_cast<uint16_t>(bits)};
    const Bf16Fields f = decode_bf16(v);
    const float x = bf16_to_f32(v);
    EXPECT_EQ(f.negative, std::signbit(x)) << bits;
    if (std::isnan(x)) {
      EXPECT_EQ(f.cls, Bf16Class::NaN) << bits;
    } else if (std::isinf(x)) {
      EXPECT_EQ(f.cls, Bf16Class::Inf) << bits;
    } else if (x == 0.0f) {
      EXPECT_EQ(f.cls, Bf16Class::Zero) << bits;
      EXPECT_EQ(f.significand, 0) << bits;
    } else {
      ASSERT_EQ(f.cls, Bf16Class::Finite) << bits;
      const double value = std::ldexp(static_cast<double>(f.significand), f.exponent - 7);
      EXPECT_EQ(f.negative ? -value : value, static_cast<double>(x)) << bits;
      EXPECT_EQ(f.significand >= 128, std::isnormal(x)) << bits;
    }
  }
}

}  // namespace
}  // namespace tessera::numerics
