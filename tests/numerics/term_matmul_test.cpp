#include "numerics/term_matmul.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.h"
#include "numerics/bf16.h"
#include "numerics/matmul.h"
#include "term_pe_cases.h"

namespace tessera::numerics {
namespace {

using testing::random_bf16;

void expect_bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(a[i]), std::bit_cast<uint32_t>(b[i])) << "element " << i;
}

TermTileConfig tile(int rows, int cols, int lanes, int width, TermSerialOperand serial) {
  TermTileConfig cfg;
  cfg.rows = rows;
  cfg.cols = cols;
  cfg.pe.lanes = lanes;
  cfg.pe.acc_fraction_bits = width;
  cfg.serial = serial;
  return cfg;
}

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// Fast and reference tile models give the same values and the same statistics, for ragged shapes
// (partial tiles, K not a multiple of L), both serial operands, narrow and fp32 widths; and the
// statistics add up.
TEST(TermMatmul, FastModelMatchesReferenceAndStatisticsAddUp) {
  std::mt19937 rng(3);
  const int shapes[][3] = {{1, 1, 1}, {3, 7, 5}, {8, 16, 8}, {9, 20, 17}, {13, 33, 10}};
  const TermTileConfig cfgs[] = {
      tile(8, 8, 8, 23, TermSerialOperand::Inputs), tile(4, 2, 3, 8, TermSerialOperand::Weights),
      tile(1, 1, 1, 23, TermSerialOperand::Weights), tile(2, 3, 16, 60, TermSerialOperand::Inputs)};
  for (const auto& s : shapes) {
    const int M = s[0], K = s[1], N = s[2];
    const auto a = random_bf16(M * K, rng, 1.0f, 0.3f);
    const auto w = random_bf16(K * N, rng, 0.1f, 0.0f);
    const auto init = random_bf16(M * N, rng, 2.0f, 0.5f);
    for (const TermTileConfig& cfg : cfgs) {
      std::vector<float> fast = init, ref = init;
      TermMatmulStats fs, rs;
      term_matmul_accumulate(cfg, a.data(), K, w.data(), N, fast.data(), N, M, K, N, &fs);
      term_matmul_accumulate_reference(cfg, a.data(), K, w.data(), N, ref.data(), N, M, K, N, &rs);
      expect_bitwise_equal(fast, ref);
      EXPECT_EQ(fs, rs);
      const int L = cfg.pe.lanes;
      EXPECT_EQ(fs.macs, int64_t{M} * K * N);
      EXPECT_EQ(fs.pe_steps, int64_t{M} * N * ceil_div(K, L));
      EXPECT_EQ(fs.tile_steps, ceil_div(M, cfg.rows) * ceil_div(N, cfg.cols) * ceil_div(K, L));
      EXPECT_EQ(fs.terms_processed + fs.terms_skipped_zero + fs.terms_skipped_oob,
                fs.pe_steps * L * kTermSlots);
      EXPECT_GE(fs.cycles, fs.tile_steps);  // min_step_cycles = 1
      EXPECT_LE(fs.cycles, fs.tile_steps * kMaxTerms);
    }
  }
}

// Operands that reach every path of the fast model (the 8-lane vector path for W <= 24 and the
// scalar one): wide exponent spreads (lanes far below the step's maximum), any bit pattern
// (subnormals, Inf, NaN), signed zeros, an accumulator with specials; ragged K.
std::vector<float> hard_values(int n, std::mt19937& rng) {
  std::vector<float> v(n);
  for (auto& x : v) {
    const uint32_t r = static_cast<uint32_t>(rng());
    const int kind = static_cast<int>(r % 16);
    if (kind == 0)
      x = bf16_to_f32(Bf16{static_cast<uint16_t>(rng())});
    else if (kind <= 2)
      x = (r & 0x100) ? -0.0f : 0.0f;
    else
      x = bf16_to_f32(Bf16{
          static_cast<uint16_t>(((r >> 8) & 0x8000) | ((100 + rng() % 50) << 7) | (rng() & 0x7f))});
  }
  return v;
}

TEST(TermMatmul, FastModelMatchesReferenceOnHardOperands) {
  std::mt19937 rng(21);
  for (int w : {4, 7, 16, 23, 24, 25}) {
    for (TermSerialOperand serial : {TermSerialOperand::Inputs, TermSerialOperand::Weights}) {
      TermTileConfig cfg = tile(3, 5, 8, w, serial);
      cfg.pe.min_step_cycles = w % 3;
      const int M = 7, K = 45, N = 11;
      auto a = hard_values(M * K, rng), wt = hard_values(K * N, rng);
      if (w != 4) {  // mostly finite operands, so most steps take the vector path
        for (auto& x : a) x = std::isfinite(x) ? x : 1.0f;
        for (auto& x : wt) x = std::isfinite(x) ? x : -2.0f;
      }
      auto init = hard_values(M * N, rng);
      init[3] = INFINITY;
      init[4] = NAN;
      std::vector<float> fast = init, ref = init;
      TermMatmulStats fs, rs;
      term_matmul_accumulate(cfg, a.data(), K, wt.data(), N, fast.data(), N, M, K, N, &fs);
      term_matmul_accumulate_reference(cfg, a.data(), K, wt.data(), N, ref.data(), N, M, K, N, &rs);
      expect_bitwise_equal(fast, ref);
      EXPECT_EQ(fs, rs) << "W=" << w;
      EXPECT_GT(fs.terms_skipped_oob, 0);
    }
  }
}

// Every width and lane count around the vector path's limits (W <= 24 and
// W + 3 + ceil(log2(L + 1)) <= 31) gives the reference's values and statistics.
TEST(TermMatmul, FastModelMatchesReferenceAtTheVectorPathLimits) {
  std::mt19937 rng(22);
  for (int lanes : {1, 2, 4, 7, 8, 9}) {
    for (int w = 22; w <= 28; ++w) {
      const TermTileConfig cfg = tile(2, 9, lanes, w, TermSerialOperand::Inputs);
      const int M = 3, K = 2 * lanes + 1, N = 10;
      const auto a = hard_values(M * K, rng), wt = hard_values(K * N, rng),
                 init = hard_values(M * N, rng);
      std::vector<float> fast = init, ref = init;
      TermMatmulStats fs, rs;
      term_matmul_accumulate(cfg, a.data(), K, wt.data(), N, fast.data(), N, M, K, N, &fs);
      term_matmul_accumulate_reference(cfg, a.data(), K, wt.data(), N, ref.data(), N, M, K, N, &rs);
      expect_bitwise_equal(fast, ref);
      EXPECT_EQ(fs, rs) << "L=" << lanes << " W=" << w;
    }
  }
}

// Tile 2 x 2, L = 8, serial operand = inputs. Row 0's inputs have 5 terms (significand 171), row
// 1's have 1 term (1.0) except one of 2 terms (1.5 = 2^8 - 2^6 in units of 2^-7). Every tile
// step lasts 5 cycles; the row-1 PEs (2 cycles) stall 3 each; their 7 one-term lanes idle 1 each.
TEST(TermMatmul, TileMovesInLockstepWithTheSlowestPe) {
  const float five_terms = bf16_to_f32(Bf16{0x3fab});
  std::vector<float> a(2 * 8, 1.0f), w(8 * 2, 1.0f), acc(4, 0.0f);
  for (int k = 0; k < 8; ++k) a[k] = five_terms;
  a[8] = 1.5f;
  TermMatmulStats st;
  term_matmul_accumulate(tile(2, 2, 8, 23, TermSerialOperand::Inputs), a.data(), 8, w.data(), 2,
                         acc.data(), 2, 2, 8, 2, &st);
  EXPECT_EQ(st.tile_steps, 1);
  EXPECT_EQ(st.cycles, 5);
  EXPECT_EQ(st.pe_stall_cycles, 2 * 3);
  EXPECT_EQ(st.lane_idle_cycles, 2 * 7);
  EXPECT_EQ(st.terms_processed, 2 * (8 * 5) + 2 * (7 + 2));
  EXPECT_EQ(acc[0], 8 * five_terms);
  EXPECT_EQ(acc[2], 8.5f);
  // Serialising the weights (all 1.0: one term each) instead makes every step one cycle.
  TermMatmulStats ws;
  std::vector<float> acc2(4, 0.0f);
  term_matmul_accumulate(tile(2, 2, 8, 23, TermSerialOperand::Weights), a.data(), 8, w.data(), 2,
                         acc2.data(), 2, 2, 8, 2, &ws);
  EXPECT_EQ(ws.cycles, 1);
  EXPECT_EQ(ws.pe_stall_cycles, 0);
  expect_bitwise_equal(acc, acc2);
}

TEST(TermMatmul, ZeroInputsSkipEveryTermAndStepsLastMinCycles) {
  const int M = 5, K = 24, N = 7;
  std::vector<float> a(M * K, 0.0f), w(K * N, 0.75f), acc(M * N, 2.0f);
  TermMatmulStats st;
  TermTileConfig cfg = tile(4, 4, 8, 23, TermSerialOperand::Inputs);
  cfg.pe.min_step_cycles = 2;
  term_matmul_accumulate(cfg, a.data(), K, w.data(), N, acc.data(), N, M, K, N, &st);
  EXPECT_EQ(st.terms_processed, 0);
  EXPECT_EQ(st.terms_skipped_oob, 0);
  EXPECT_EQ(st.terms_skipped_zero, int64_t{M} * N * 3 * 8 * kTermSlots);
  EXPECT_EQ(st.cycles, 2 * st.tile_steps);
  for (float v : acc) EXPECT_EQ(v, 2.0f);
}

// Small integers: no term is truncated or skipped, so the term-serial tile gives the exact dot
// products, as the bit-parallel MXU does.
TEST(TermMatmul, SmallIntegerProductsEqualTheBitParallelMxu) {
  const int M = 6, K = 40, N = 9;
  std::vector<float> a(M * K), w(K * N);
  for (int i = 0; i < M * K; ++i) a[i] = static_cast<float>(i % 7 - 3);
  for (int i = 0; i < K * N; ++i) w[i] = static_cast<float>(i % 5 - 2);
  std::vector<float> term(M * N, 1.0f), mxu(M * N, 1.0f);
  TermMatmulStats st;
  term_matmul_accumulate(TermTileConfig{}, a.data(), K, w.data(), N, term.data(), N, M, K, N, &st);
  mxu_matmul_accumulate(a.data(), K, w.data(), N, mxu.data(), N, M, K, N);
  expect_bitwise_equal(term, mxu);
  EXPECT_EQ(st.terms_skipped_oob, 0);
}

// At fp32 width the accumulator holds an fp32 value exactly, so splitting K at multiples of L
// into calls that continue from acc gives the same bits as one call (the MXU's mmul.acc chain).
TEST(TermMatmul, KSplitAtLaneMultiplesContinuesTheSameChainAtFp32Width) {
  std::mt19937 rng(4);
  const int M = 8, K = 96, N = 12;
  const auto a = random_bf16(M * K, rng, 1.0f, 0.2f);
  const auto w = random_bf16(K * N, rng, 1.0f, 0.0f);
  const TermTileConfig cfg = tile(4, 4, 8, 23, TermSerialOperand::Inputs);
  std::vector<float> whole(M * N, 0.0f), split(M * N, 0.0f);
  TermMatmulStats ws, ss;
  term_matmul_accumulate(cfg, a.data(), K, w.data(), N, whole.data(), N, M, K, N, &ws);
  for (int k0 = 0; k0 < K; k0 += 32)
    term_matmul_accumulate(cfg, a.data() + k0, K, w.data() + k0 * N, N, split.data(), N, M, 32, N,
                           &ss);
  expect_bitwise_equal(whole, split);
  EXPECT_EQ(ws.cycles, ss.cycles);
  EXPECT_EQ(ws.terms_processed, ss.terms_processed);
  EXPECT_EQ(ws.terms_skipped_oob, ss.terms_skipped_oob);
}

TEST(TermMatmul, BadTileIsRejectedNamingTheField) {
  TermTileConfig cfg;
  cfg.rows = 0;
  float x = 0.0f;
  try {
    term_matmul_accumulate(cfg, &x, 1, &x, 1, &x, 1, 1, 1, 1, nullptr);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "TermTileConfig.rows");
    EXPECT_EQ(e.why(), "0 is out of range [1, 4096]");
  }
}

// Consecutive calls as an MXU makes them (one weight tile, new inputs per push) reuse the decoded
// weights: new inputs, one changed weight, the same weights at another leading
// dimension, a different shape and the other serial operand all give the reference's values.
TEST(TermMatmul, RepeatedWeightsGiveTheReferenceValuesWhateverChangesBetweenCalls) {
  std::mt19937 rng(11);
  const int M = 8, K = 24, N = 12;
  auto w = random_bf16(K * N, rng, 0.1f, 0.1f);
  std::vector<float> w_wide(static_cast<size_t>(K) * (N + 3), 0.0f);
  const auto check = [&](const TermTileConfig& cfg, const float* wt, int ldw, int m) {
    const auto a = random_bf16(m * K, rng, 1.0f, 0.3f);
    std::vector<float> fast(static_cast<size_t>(m) * N, 0.0f), ref = fast;
    TermMatmulStats fs, rs;
    term_matmul_accumulate(cfg, a.data(), K, wt, ldw, fast.data(), N, m, K, N, &fs);
    term_matmul_accumulate_reference(cfg, a.data(), K, wt, ldw, ref.data(), N, m, K, N, &rs);
    expect_bitwise_equal(fast, ref);
    EXPECT_EQ(fs, rs);
  };
  const TermTileConfig inputs = tile(4, 4, 8, 23, TermSerialOperand::Inputs);
  const TermTileConfig weights = tile(4, 4, 8, 23, TermSerialOperand::Weights);
  for (int push = 0; push < 3; ++push) check(inputs, w.data(), N, M);
  w[5 * N + 7] = round_to_bf16(w[5 * N + 7] + 1.0f);
  check(inputs, w.data(), N, M);
  for (int k = 0; k < K; ++k)
    std::copy_n(&w[static_cast<size_t>(k) * N], N, &w_wide[static_cast<size_t>(k) * (N + 3)]);
  check(inputs, w_wide.data(), N + 3, M);
  check(inputs, w.data(), N, M - 3);
  for (int push = 0; push < 2; ++push) check(weights, w.data(), N, M);
  check(inputs, w.data(), N, M);
}

}  // namespace
}  // namespace tessera::numerics
