// The row-by-row vector tile (numerics/term_pe/tile.h, row_steps) and its lockstep steps
// against reference_step PE by PE and step by step, and inside term_matmul_accumulate on operands
// built to reach every path: uniform lockstep steps (timing from the serial row), zero parallel
// operands (timing per PE), truncated lanes, out-of-bounds terms, windows that jump above the
// accumulator, fixed-exponent mode, and the fallbacks (Inf/NaN operands, -0 and non-fp32-normal
// accumulators).
#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "numerics/bf16.h"
#include "numerics/term_matmul.h"
#include "numerics/term_pe/reference.h"
#include "numerics/term_pe/tile.h"
#include "numerics/term_row_case.h"

namespace tessera::numerics {
namespace {

// Zeros of both signs, subnormals, exponents spread over the whole range (huge gaps) or clustered,
// and Inf/NaN when `specials`.
Bf16 edge_operand(std::mt19937_64& rng, bool specials) {
  const uint64_t r = rng();
  const auto sign = static_cast<uint16_t>((r >> 8) & 0x8000);
  if (r % 7 == 0) return Bf16{sign};
  if (specials && r % 61 == 1) return Bf16{static_cast<uint16_t>(sign | 0x7f80)};
  if (specials && r % 61 == 2) return Bf16{0x7fc1};
  if (r % 31 == 3) return Bf16{static_cast<uint16_t>(sign | ((r >> 30) % 127 + 1))};  // subnormal
  const uint16_t e = r % 11 == 4 ? static_cast<uint16_t>(1 + (r >> 20) % 254)
                                 : static_cast<uint16_t>(118 + (r >> 20) % 14);
  return Bf16{static_cast<uint16_t>(sign | (e << 7) | ((r >> 40) & 0x7f))};
}

// Accumulator start values: +0, -0, fp32 subnormals, Inf, and normal values near the products.
float edge_accumulator(std::mt19937_64& rng) {
  const uint64_t r = rng();
  switch (r % 12) {
    case 0:
      return 0.0f;
    case 1:
      return -0.0f;
    case 2:
      return std::bit_cast<float>(static_cast<uint32_t>((r >> 12) & 0x807fffffu));
    case 3:
      return r % 5 == 0 ? INFINITY : 1.0f;
    default:
      return std::ldexp(static_cast<float>((r >> 16) % 100000) / 1000.0f - 50.0f,
                        static_cast<int>((r >> 40) % 20) - 14);
  }
}

TEST(TermTileRows, RowStepsMatchReferencePeByPeAndStepByStep) {
  std::mt19937_64 rng(57);
  for (int trial = 0; trial < 1500; ++trial) {
    // Widths 4..24 (a third at 23: the fp32 load/store of the accumulators), 2, 5 or 8 lanes.
    PeConfig cfg{std::vector<int>{2, 5, 8}[rng() % 3],
                 trial % 3 == 0 ? 23 : 4 + static_cast<int>(rng() % 21),
                 rng() % 5 == 0 ? 20 : 127,
                 static_cast<int>(rng() % 3),
                 rng() % 3 == 0,
                 static_cast<int>(rng() % 81) - 50};
    if (!detail::tile_avx2_supported(cfg)) GTEST_SKIP() << "no AVX2 on this host";
    const int L = cfg.lanes, steps = 1 + static_cast<int>(rng() % 5);
    const bool specials = trial % 4 == 0;
    const test::RowCase c = test::make_row_case(
        rng, L, steps, [&] { return edge_operand(rng, specials); },
        [&] { return edge_operand(rng, specials); });
    std::vector<float> out(c.x_count);
    for (float& v : out) v = edge_accumulator(rng);
    const std::vector<float> init = out;
    std::vector<int> step_max(static_cast<size_t>(c.count) * steps, 0);
    const std::vector<detail::RowGroup> groups = test::row_groups(c, out.data(), step_max.data());
    detail::GroupTotals totals;
    detail::row_steps(cfg, c.ops, c.row, 0, steps, groups.data(), c.count, totals);

    detail::GroupTotals want;
    for (int g = 0; g < c.count; ++g) {
      const test::GroupReference e = test::reference_group(cfg, c, g, init.data());
      test::add_totals(want, e.totals);
      for (int v = 0; v < c.valids[g]; ++v)
        ASSERT_EQ(std::bit_cast<uint32_t>(out[c.x0s[g] + v]), std::bit_cast<uint32_t>(e.out[v]))
            << "trial " << trial << " group " << g << " PE " << v;
      for (int j = 0; j < steps; ++j)
        ASSERT_EQ(step_max[static_cast<size_t>(g) * steps + j], e.slowest[j])
            << "trial " << trial << " group " << g;
    }
    EXPECT_EQ(totals.processed, want.processed) << "trial " << trial;
    EXPECT_EQ(totals.skipped_zero, want.skipped_zero) << "trial " << trial;
    EXPECT_EQ(totals.skipped_oob, want.skipped_oob) << "trial " << trial;
    EXPECT_EQ(totals.lane_idle, want.lane_idle) << "trial " << trial;
    EXPECT_EQ(totals.pe_cycles, want.pe_cycles) << "trial " << trial;
  }
}

// Inputs ReLU(N(0, 1)) with exact zeros, weights N(0, 0.05) with zeros (non-uniform steps), a few
// tiny values (out-of-bounds terms) and huge ones (windows far above the accumulator); rows 2 and 7
// of the inputs hold an Inf and a NaN (the scalar fallback), accumulator starts of -0 (the general
// vector step) and fp32 subnormals (loaded through PeAccumulator).
std::vector<float> designed_inputs(int n, std::mt19937& rng, float scale, float zero_fraction) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) {
    const float p = u(rng);
    x = p < zero_fraction            ? 0.0f
        : p < zero_fraction + 0.01f  ? 1e-7f * normal(rng)
        : p < zero_fraction + 0.015f ? 300.0f
                                     : normal(rng);
    x = round_to_bf16(x);
  }
  return v;
}

TEST(TermTileRows, LockstepAndFallbackPathsMatchTheReferenceInAMatmul) {
  std::mt19937 rng(58);
  const int M = 11, K = 50, N = 21;
  for (int width : {4, 8, 16, 23, 24}) {
    for (TermSerialOperand serial : {TermSerialOperand::Inputs, TermSerialOperand::Weights}) {
      for (bool fixed : {false, true}) {
        TermTileConfig cfg;
        cfg.rows = 5;
        cfg.cols = 12;  // ragged: groups of 8 and 4 PEs inside a block, partial blocks at the edges
        cfg.serial = serial;
        cfg.pe.acc_fraction_bits = width;
        cfg.pe.fixed_exponent_mode = fixed;
        cfg.pe.fixed_exponent = -6;
        std::vector<float> a = designed_inputs(M * K, rng, 1.0f, 0.4f);
        for (float& x : a) x = std::max(x, 0.0f);
        const std::vector<float> w = designed_inputs(K * N, rng, 0.05f, 0.05f);
        a[2 * K + 17] = INFINITY;
        a[7 * K + 3] = NAN;
        std::vector<float> init(M * N, 0.0f);
        init[4] = -0.0f;
        init[N + 5] = 1e-40f;
        init[3 * N + 8] = 0.75f;
        std::vector<float> fast = init, ref = init;
        TermMatmulStats fs, rs;
        term_matmul_accumulate(cfg, a.data(), K, w.data(), N, fast.data(), N, M, K, N, &fs);
        term_matmul_accumulate_reference(cfg, a.data(), K, w.data(), N, ref.data(), N, M, K, N,
                                         &rs);
        for (int i = 0; i < M * N; ++i)
          ASSERT_EQ(std::bit_cast<uint32_t>(fast[i]), std::bit_cast<uint32_t>(ref[i]))
              << "W " << width << " serial " << static_cast<int>(serial) << " fixed " << fixed
              << " element " << i;
        EXPECT_EQ(fs, rs) << "W " << width << " serial " << static_cast<int>(serial) << " fixed "
                          << fixed;
        EXPECT_GT(rs.terms_skipped_oob, 0);
        EXPECT_GT(rs.pe_stall_cycles, 0);
      }
    }
  }
}

// Many pushes through one weight tile (the MXU's pattern: weights decoded once, inputs each time)
// give the reference's values and statistics call after call.
TEST(TermTileRows, RepeatedPushesThroughOneWeightTileMatchTheReference) {
  std::mt19937 rng(59);
  const int M = 8, K = 128, N = 128;
  TermTileConfig cfg;
  const std::vector<float> w = designed_inputs(K * N, rng, 0.05f, 0.02f);
  std::vector<float> fast(M * N, 0.0f), ref(M * N, 0.0f);
  TermMatmulStats fs, rs;
  for (int push = 0; push < 4; ++push) {
    std::vector<float> a = designed_inputs(M * K, rng, 1.0f, 0.5f);
    for (float& x : a) x = std::max(x, 0.0f);
    term_matmul_accumulate(cfg, a.data(), K, w.data(), N, fast.data(), N, M, K, N, &fs);
    term_matmul_accumulate_reference(cfg, a.data(), K, w.data(), N, ref.data(), N, M, K, N, &rs);
    for (int i = 0; i < M * N; ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(fast[i]), std::bit_cast<uint32_t>(ref[i]))
          << "push " << push << " element " << i;
    EXPECT_EQ(fs, rs) << "push " << push;
  }
}

}  // namespace
}  // namespace tessera::numerics
