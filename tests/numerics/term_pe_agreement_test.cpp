// The fast PE model against the bit-level reference (same value bits, same per-lane term counts),
// and both against exact accumulation when nothing can fall out of the window.
#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "numerics/term_pe/reference.h"
#include "numerics/term_pe/term_pe.h"
#include "term_pe_cases.h"

namespace tessera::numerics {
namespace {

using testing::fast_matches_reference;
using testing::kEdgeBf16;
using testing::PeCase;
using testing::PeCaseGenerator;

TEST(TermPeAgreement, FastModelMatchesReferenceOnRandomCases) {
  PeCaseGenerator gen(20261121);
  for (int i = 0; i < 100000; ++i) ASSERT_TRUE(fast_matches_reference(gen.next())) << "case " << i;
}

PeAccumulator finite_acc(const PeConfig& cfg, bool negative, int exponent, unsigned __int128 low) {
  const int W = cfg.acc_fraction_bits;
  const auto one = static_cast<unsigned __int128>(1);
  return PeAccumulator{PeAccumulator::Kind::Finite, negative, exponent,
                       (one << W) | (low & ((one << W) - 1))};
}

// Every pair of edge operands in lane 0 of a 2-lane PE (lane 1 a fixed ordinary product), against
// every accumulator class, for widths on both sides of the 64-bit/128-bit switch.
TEST(TermPeAgreement, FastModelMatchesReferenceOnAllEdgeClasses) {
  for (int w : {4, 7, 23, 55, 56, 100}) {
    for (int max_exp : {127, 15}) {
      PeConfig cfg;
      cfg.lanes = 2;
      cfg.acc_fraction_bits = w;
      cfg.acc_max_exponent = max_exp;
      const std::vector<PeAccumulator> accs = {
          PeAccumulator{PeAccumulator::Kind::Zero, false, 0, 0},
          PeAccumulator{PeAccumulator::Kind::Zero, true, 0, 0},
          PeAccumulator{PeAccumulator::Kind::Inf, false, 0, 0},
          PeAccumulator{PeAccumulator::Kind::Inf, true, 0, 0},
          PeAccumulator{PeAccumulator::Kind::NaN, false, 0, 0},
          finite_acc(cfg, false, 0, 0x5a5a5a5a5a5a5a5aull),
          finite_acc(cfg, true, max_exp, ~static_cast<unsigned __int128>(0)),
          finite_acc(cfg, false, -300, 1),
          finite_acc(cfg, true, 254, 0),
          finite_acc(cfg, false, -252, 0x123456789ull)};
      for (uint16_t ea : kEdgeBf16)
        for (uint16_t eb : kEdgeBf16)
          for (uint16_t other : {uint16_t{0x0000}, uint16_t{0x3fc0}, uint16_t{0xc2f7}})
            for (const PeAccumulator& acc : accs) {
              PeCase c{cfg, {Bf16{ea}, Bf16{other}}, {Bf16{eb}, Bf16{0x3f81}}, acc};
              ASSERT_TRUE(fast_matches_reference(c));
            }
    }
  }
}

// Every bf16 B (all 65,536 patterns) against a fixed set of A values: once with the whole set in
// the 8 lanes of one step (every lane multiplies the same B, so lanes differ only by A), once per
// A of three of them alone in a 1-lane PE; the accumulator cycles through classes with B. The long
// tier (tests/numerics_long) repeats this with fixed products in the other lanes and more widths.
TEST(TermPeAgreement, FastModelMatchesReferenceForEveryB) {
  const std::vector<uint16_t> fixed_a = {0x3f80, 0xbfc0, 0x0001, 0x7f7f,
                                         0x4049, 0xff80, 0x0d80, 0x5f00};
  for (int w : {23, 8}) {
    PeConfig cfg;
    cfg.acc_fraction_bits = w;
    PeConfig one = cfg;
    one.lanes = 1;
    const std::vector<PeAccumulator> accs = {PeAccumulator{},
                                             accumulator_from_f32(1.0f, cfg),
                                             accumulator_from_f32(-3.5e-3f, cfg),
                                             accumulator_from_f32(7.25e20f, cfg),
                                             accumulator_from_f32(-1.0e-30f, cfg),
                                             PeAccumulator{PeAccumulator::Kind::Inf, true, 0, 0}};
    std::vector<Bf16> a;
    for (uint16_t bits : fixed_a) a.push_back(Bf16{bits});
    for (int bits = 0; bits < 65536; ++bits) {
      const PeAccumulator& acc = accs[bits % accs.size()];
      const std::vector<Bf16> b(8, Bf16{static_cast<uint16_t>(bits)});
      ASSERT_TRUE(fast_matches_reference(PeCase{cfg, a, b, acc})) << "B " << bits;
      if (w != 23) continue;
      for (const Bf16 a0 : {a[0], a[2], a[4]})
        ASSERT_TRUE(fast_matches_reference(PeCase{one, {a0}, {b[0]}, acc}))
            << "A " << a0.bits << " B " << bits;
    }
  }
}

// Exact oracle: every product of bf16 values is an integer multiple of 2^-kScale when exponents
// stay in [-16, 16] (ma * mb * 2^(ea + eb - 14), ea + eb >= -32), and K products sum well
// inside 128 bits.
constexpr int kScale = 46;

__int128 exact_product(Bf16 a, Bf16 b) {
  const Bf16Fields fa = decode_bf16(a), fb = decode_bf16(b);
  if (fa.cls == Bf16Class::Zero || fb.cls == Bf16Class::Zero) return 0;
  const __int128 mag = static_cast<__int128>(fa.significand * fb.significand)
                       << (fa.exponent + fb.exponent - 14 + kScale);
  return fa.negative != fb.negative ? -mag : mag;
}

// x * 2^-kScale rounded once to fp32 (nearest even); x's magnitude is below 2^100.
float round_exact_to_f32(__int128 x) {
  if (x == 0) return 0.0f;
  const bool negative = x < 0;
  auto mag = static_cast<unsigned __int128>(negative ? -x : x);
  int lead = 127;
  while (((mag >> lead) & 1) == 0) --lead;
  int shift = lead - 23;
  if (shift > 0) {
    const unsigned __int128 rem = mag & ((static_cast<unsigned __int128>(1) << shift) - 1);
    const unsigned __int128 half = static_cast<unsigned __int128>(1) << (shift - 1);
    mag >>= shift;
    if (rem > half || (rem == half && (mag & 1) != 0)) ++mag;
  } else {
    mag <<= -shift;
  }
  const float f = std::ldexp(static_cast<float>(static_cast<uint64_t>(mag)), shift - kScale);
  return negative ? -f : f;
}

Bf16 random_bf16(std::mt19937_64& rng, int exp_lo, int exp_hi) {
  if (rng() % 8 == 0) return Bf16{static_cast<uint16_t>((rng() & 1) << 15)};
  const auto e =
      static_cast<uint16_t>(exp_lo + static_cast<int>(rng() % (exp_hi - exp_lo + 1)) + 127);
  return Bf16{static_cast<uint16_t>(((rng() & 1) << 15) | (e << 7) | (rng() & 0x7f))};
}

// With W wide enough that no term is out of bounds and no bit is ever truncated or rounded away,
// the PE's result over many steps equals the exact sum of all products rounded once: skipping and
// truncation are the only approximations.
TEST(TermPeAgreement, WideAccumulatorEqualsExactSumRoundedOnce) {
  std::mt19937_64 rng(99);
  struct Setup {
    int width, exp_lo, exp_hi;
  };
  // W = 100: products >= 2^-46, window LSB 2^(E - 100) with E <= 32 + growth < 54;
  // W = 56 (64-bit path): exponents in [-4, 4]: products >= 2^-22, E < 20.
  for (const Setup s : {Setup{100, -16, 16}, Setup{56, -4, 4}}) {
    for (int lanes : {1, 8, 16}) {
      PeConfig cfg;
      cfg.acc_fraction_bits = s.width;
      cfg.lanes = lanes;
      const TermPe pe(cfg);
      for (int trial = 0; trial < 150; ++trial) {
        const int steps = 1 + static_cast<int>(rng() % 64);
        PeAccumulator fast, ref;
        __int128 exact = 0;
        for (int j = 0; j < steps; ++j) {
          std::vector<Bf16> a(lanes), b(lanes);
          for (int i = 0; i < lanes; ++i) {
            a[i] = random_bf16(rng, s.exp_lo, s.exp_hi);
            b[i] = random_bf16(rng, s.exp_lo, s.exp_hi);
            exact += exact_product(a[i], b[i]);
          }
          const StepStats st = pe.step(a, b, fast);
          reference_step(cfg, a, b, ref);
          for (int i = 0; i < lanes; ++i) ASSERT_EQ(st.lanes[i].skipped_oob, 0);
        }
        ASSERT_EQ(fast, ref);
        const float got = accumulator_to_f32(fast, cfg);
        ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(round_exact_to_f32(exact)))
            << "W=" << s.width << " L=" << lanes << " trial " << trial;
      }
    }
  }
}

// The other side of the same property: at fp32 width, terms do fall out of bounds and the result
// may differ from the exact sum, but never by more than the truncation bound of one step, the
// window's LSB per processed or skipped term plus the accumulator's alignment, plus rounding.
TEST(TermPeAgreement, Fp32WidthErrorPerStepIsBoundedByTheWindow) {
  std::mt19937_64 rng(5);
  PeConfig cfg;
  const TermPe pe(cfg);
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<Bf16> a(8), b(8);
    __int128 exact = 0;
    for (int i = 0; i < 8; ++i) {
      a[i] = random_bf16(rng, -16, 16);
      b[i] = random_bf16(rng, -16, 16);
      exact += exact_product(a[i], b[i]);
    }
    PeAccumulator acc;
    pe.step(a, b, acc);
    const double got = accumulator_to_f32(acc, cfg);
    const double want = std::ldexp(static_cast<double>(exact), -kScale);
    int max_pe = -1000;
    for (int i = 0; i < 8; ++i) {
      const Bf16Fields fa = decode_bf16(a[i]), fb = decode_bf16(b[i]);
      if (fa.cls == Bf16Class::Finite && fb.cls == Bf16Class::Finite)
        max_pe = std::max(max_pe, fa.exponent + fb.exponent);
    }
    if (max_pe == -1000) continue;
    const double lsb = std::ldexp(1.0, max_pe - cfg.acc_fraction_bits);
    ASSERT_LE(std::fabs(got - want), 8 * kMaxTerms * lsb + std::fabs(want) * std::ldexp(1.0, -23))
        << trial;
  }
}

}  // namespace
}  // namespace tessera::numerics
