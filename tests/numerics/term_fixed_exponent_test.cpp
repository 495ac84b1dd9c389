// Fixed-exponent mode of the term-serial PE (numerics/term_pe/term_pe.h, step 1): E = max(fixed
// exponent, products' maximum, accumulator's exponent). Checked on the PE step (both models) and on
// the tile (fast model, scalar and vector paths, against the reference).
#include <bit>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.h"
#include "numerics/bf16.h"
#include "numerics/term_matmul.h"
#include "numerics/term_pe/reference.h"
#include "numerics/term_pe/term_pe.h"
#include "support/error_of.h"
#include "term_pe_cases.h"

namespace tessera::numerics {
namespace {

PeConfig fixed(int exponent) {
  PeConfig cfg;
  cfg.fixed_exponent_mode = true;
  cfg.fixed_exponent = exponent;
  return cfg;
}

struct StepRun {
  float value;
  StepStats stats;
};

StepRun step_both(const PeConfig& cfg, float a, float b, float init) {
  const std::vector<Bf16> va = {bf16_from_f32(a)}, vb = {bf16_from_f32(b)};
  PeAccumulator fast_acc = accumulator_from_f32(init, cfg), ref_acc = fast_acc;
  const StepStats fast = TermPe(cfg).step(va, vb, fast_acc);
  const StepStats ref = reference_step(cfg, va, vb, ref_acc);
  EXPECT_EQ(fast_acc, ref_acc) << to_string(fast_acc) << " vs " << to_string(ref_acc);
  EXPECT_EQ(fast, ref);
  return StepRun{accumulator_to_f32(fast_acc, cfg), fast};
}

// 1.5 * 1.0: product exponent 0, A's significand 192 (0b11000000), B = 2^7 (one term). With the
// window's top at E the term is shifted to trunc(192 * 2^(W - (E + 7 - 7) - 7)) units of 2^(E - W).
TEST(TermFixedExponent, AWindowAboveTheProductsTruncatesThenSkipsTheirTerms) {
  EXPECT_EQ(step_both(fixed(0), 1.5f, 1.0f, 0.0f).value, 1.5f);   // E = 0: exact
  EXPECT_EQ(step_both(fixed(22), 1.5f, 1.0f, 0.0f).value, 1.5f);  // 192 * 2^-6 = 3 units of 2^-1
  const StepRun truncated = step_both(fixed(23), 1.5f, 1.0f, 0.0f);
  EXPECT_EQ(truncated.value, 1.0f);  // 192 * 2^-7 = 1.5 units of 2^0, truncated to 1
  EXPECT_EQ(truncated.stats.lanes[0], (LaneTerms{1, 7, 0}));
  const StepRun skipped = step_both(fixed(24), 1.5f, 1.0f, 0.0f);
  EXPECT_EQ(skipped.value, 0.0f);  // d = 24 > W: out of bounds
  EXPECT_EQ(skipped.stats.lanes[0], (LaneTerms{0, 7, 1}));
  EXPECT_EQ(skipped.stats.term_cycles, 0);
  EXPECT_EQ(skipped.stats.cycles, 1);
}

TEST(TermFixedExponent, TheWindowFollowsProductsAndAccumulatorsAboveTheFixedExponent) {
  // Product exponent 6 (8 * 8) above the fixed -10: the window is the dynamic one.
  EXPECT_EQ(step_both(fixed(-10), 8.0f, 8.0f, 0.25f).value, 64.25f);
  // Accumulator 2^30 above the fixed 0: 1 * 1 lies 30 binades below, out of bounds.
  const StepRun r = step_both(fixed(0), 1.0f, 1.0f, 1073741824.0f);
  EXPECT_EQ(r.value, 1073741824.0f);
  EXPECT_EQ(r.stats.lanes[0], (LaneTerms{0, 7, 1}));
}

TEST(TermFixedExponent, AFixedAccumulatorIsTruncatedToTheWindowEvenWithoutProducts) {
  // 1 + 2^-20 with E = 4: the window's LSB is 2^-19, the 2^-20 bit is dropped.
  EXPECT_EQ(step_both(fixed(4), 0.0f, 1.0f, 1.0f + 0x1p-20f).value, 1.0f);
  EXPECT_EQ(step_both(PeConfig{}, 0.0f, 1.0f, 1.0f + 0x1p-20f).value, 1.0f + 0x1p-20f);
}

// Tile matmuls in fixed-exponent mode, fast (vector path for W = 23 and 12, scalar for W = 40)
// against the reference; a fixed exponent below every product and accumulator changes nothing; a
// high one skips terms as out of bounds.
TEST(TermFixedExponent, TileMatchesReferenceAndALowFixedExponentIsTheDynamicMode) {
  std::mt19937 rng(5);
  const int M = 9, K = 20, N = 11;
  const auto a = testing::random_bf16(M * K, rng, 1.0f, 0.4f);
  const auto w = testing::random_bf16(K * N, rng, 0.05f, 0.05f);
  for (int width : {23, 12, 40}) {
    for (TermSerialOperand serial : {TermSerialOperand::Inputs, TermSerialOperand::Weights}) {
      TermTileConfig dynamic;
      dynamic.pe.acc_fraction_bits = width;
      dynamic.serial = serial;
      TermMatmulStats dynamic_stats;
      std::vector<float> dynamic_out(M * N, 0.0f);
      term_matmul_accumulate(dynamic, a.data(), K, w.data(), N, dynamic_out.data(), N, M, K, N,
                             &dynamic_stats);
      for (int e : {-300, -8, -2, 3}) {
        TermTileConfig cfg = dynamic;
        cfg.pe.fixed_exponent_mode = true;
        cfg.pe.fixed_exponent = e;
        std::vector<float> fast(M * N, 0.0f), ref(M * N, 0.0f);
        TermMatmulStats fs, rs;
        term_matmul_accumulate(cfg, a.data(), K, w.data(), N, fast.data(), N, M, K, N, &fs);
        term_matmul_accumulate_reference(cfg, a.data(), K, w.data(), N, ref.data(), N, M, K, N,
                                         &rs);
        for (int i = 0; i < M * N; ++i)
          ASSERT_EQ(std::bit_cast<uint32_t>(fast[i]), std::bit_cast<uint32_t>(ref[i]))
              << "W " << width << " E " << e;
        EXPECT_EQ(fs, rs) << "W " << width << " E " << e;
        if (e == -300) {
          for (int i = 0; i < M * N; ++i)
            ASSERT_EQ(std::bit_cast<uint32_t>(fast[i]), std::bit_cast<uint32_t>(dynamic_out[i]));
          EXPECT_EQ(fs, dynamic_stats);
        }
        if (e == 3 && width <= 23) {
          EXPECT_GT(fs.terms_skipped_oob, dynamic_stats.terms_skipped_oob) << "W " << width;
        }
      }
    }
  }
}

TEST(TermFixedExponent, OutOfRangeFixedExponent_bad) {
  EXPECT_EQ(tessera::testing::error_of([] { TermPe pe(fixed(401)); }),
            "PeConfig.fixed_exponent: 401 is out of range [-400, 400]");
  EXPECT_EQ(tessera::testing::error_of([] { TermPe pe(fixed(-401)); }),
            "PeConfig.fixed_exponent: -401 is out of range [-400, 400]");
}

}  // namespace
}  // namespace tessera::numerics
