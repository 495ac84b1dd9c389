// Fidelity of the fast MXU model (core/mxu.h) against the slow cycle-by-cycle systolic model
// (systolic_model.h) and the numerics contract (numerics/matmul.h), swept over shapes and configs.
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "mxu_driver.h"

namespace tessera::mxutest {
namespace {

struct Shape {
  int M, K, N, R, C, S;
};

std::string describe(const Shape& s, bool db) {
  return "M=" + std::to_string(s.M) + " K=" + std::to_string(s.K) + " N=" + std::to_string(s.N) +
         " R=" + std::to_string(s.R) + " C=" + std::to_string(s.C) + " S=" + std::to_string(s.S) +
         (db ? " double-buffered" : " single-buffered");
}

int64_t formula(const Shape& s) {
  const int64_t kt = (s.K + s.R - 1) / s.R, nt = (s.N + s.C - 1) / s.C;
  const int64_t m = (s.M + s.S - 1) / s.S * s.S;
  return kt * nt * (2 * s.R + s.C + m - 2);
}

::testing::AssertionResult bitwise_equal(const std::vector<float>& x, const std::vector<float>& y) {
  if (x.size() != y.size()) return ::testing::AssertionFailure() << "sizes differ";
  for (size_t i = 0; i < x.size(); ++i)
    if (std::bit_cast<uint32_t>(x[i]) != std::bit_cast<uint32_t>(y[i]))
      return ::testing::AssertionFailure() << "element " << i << ": " << x[i] << " vs " << y[i];
  return ::testing::AssertionSuccess();
}

// Small arrays, every tiling class: one tile, K and N ragged, several K tiles (accumulator chain),
// M below / equal to / above R + C, one and several sublanes, non-square arrays.
const std::vector<Shape> kShapes = {
    {4, 4, 4, 4, 4, 1},      {1, 4, 4, 4, 4, 1},    {8, 8, 8, 4, 4, 2},     {5, 9, 7, 4, 4, 1},
    {12, 16, 12, 4, 4, 4},   {2, 12, 4, 4, 4, 2},   {16, 20, 9, 8, 4, 4},   {6, 7, 19, 4, 8, 2},
    {40, 24, 24, 8, 8, 8},   {64, 32, 16, 8, 8, 2}, {3, 33, 17, 16, 16, 1}, {32, 48, 40, 16, 16, 8},
    {100, 16, 16, 16, 8, 4}, {9, 5, 3, 8, 16, 1},   {24, 64, 8, 16, 4, 8},  {2, 2, 2, 2, 2, 2},
};

TEST(MxuTiming, FastModelMatchesSystolicModelInValuesAndSpan) {
  uint32_t seed = 1;
  for (const Shape& s : kShapes)
    for (bool db : {false, true}) {
      SCOPED_TRACE(describe(s, db));
      const GemmCase g = random_gemm(s.M, s.K, s.N, seed++);
      const auto spec = mxu_spec(s.R, s.C, s.S, db);
      const FastRun fast = run_fast(spec, g);
      const SlowRun slow = run_slow(spec, g);
      const std::vector<float> ref = reference_gemm(g);
      EXPECT_TRUE(bitwise_equal(fast.c, ref));
      EXPECT_TRUE(bitwise_equal(slow.c, ref));
      EXPECT_EQ(fast.stats.first_weight_cycle, slow.run.first_weight_cycle);
      EXPECT_EQ(fast.stats.last_result_cycle, slow.run.last_result_cycle);
      EXPECT_EQ(fast.stats.span(), slow.run.span());
      EXPECT_EQ(fast.stats.busy_cycles, slow.run.input_rows);
    }
}

TEST(MxuTiming, FullSizeArrayWithFewRowsMatchesSystolicModel) {
  for (bool db : {false, true}) {
    const Shape s{16, 256, 160, 128, 128, 8};
    SCOPED_TRACE(describe(s, db));
    const GemmCase g = random_gemm(s.M, s.K, s.N, 77);
    const auto spec = mxu_spec(s.R, s.C, s.S, db);
    const FastRun fast = run_fast(spec, g);
    const SlowRun slow = run_slow(spec, g);
    EXPECT_TRUE(bitwise_equal(fast.c, reference_gemm(g)));
    EXPECT_TRUE(bitwise_equal(slow.c, fast.c));
    EXPECT_EQ(fast.stats.span(), slow.run.span());
    if (!db) {
      EXPECT_EQ(fast.stats.span(), formula(s));
    }
  }
}

TEST(MxuTiming, SingleBufferedSpanEqualsPublishedFormula) {
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(describe(s, false));
    const GemmCase g = random_gemm(s.M, s.K, s.N, 5);
    const auto spec = mxu_spec(s.R, s.C, s.S, false);
    EXPECT_EQ(run_fast(spec, g).stats.span(), formula(s));
    EXPECT_EQ(run_slow(spec, g).run.span(), formula(s));
  }
}

TEST(MxuTiming, DoubleBufferingShortensEveryMultiTileSpan) {
  for (const Shape& s : kShapes) {
    const int64_t tiles = static_cast<int64_t>((s.K + s.R - 1) / s.R) * ((s.N + s.C - 1) / s.C);
    if (tiles < 2) continue;
    SCOPED_TRACE(describe(s, true));
    const GemmCase g = random_gemm(s.M, s.K, s.N, 9);
    const int64_t single = run_slow(mxu_spec(s.R, s.C, s.S, false), g).run.span();
    const int64_t doubled = run_slow(mxu_spec(s.R, s.C, s.S, true), g).run.span();
    EXPECT_LT(doubled, single);
    EXPECT_EQ(run_fast(mxu_spec(s.R, s.C, s.S, true), g).stats.span(), doubled);
  }
}

// With M well above 2R + C, the next tile's weights load entirely behind the current tile's inputs,
// so the input port streams almost every cycle of the span.
TEST(MxuTiming, DoubleBufferedArrayIsBusyAlmostEveryCycleForLargeM) {
  const Shape s{512, 32, 32, 8, 8, 8};
  const GemmCase g = random_gemm(s.M, s.K, s.N, 11);
  const auto spec = mxu_spec(s.R, s.C, s.S, true);
  const FastRun fast = run_fast(spec, g);
  const SlowRun slow = run_slow(spec, g);
  EXPECT_EQ(fast.stats.span(), slow.run.span());
  const double busy =
      static_cast<double>(fast.stats.busy_cycles) / static_cast<double>(fast.stats.span());
  EXPECT_GT(busy, 0.98);
  EXPECT_EQ(fast.stats.busy_cycles, 16 * 512);
  // Only the first tile's load and the last tile's drain are not hidden.
  EXPECT_EQ(fast.stats.span(), s.R + fast.stats.busy_cycles + s.R + s.C - 2);
  EXPECT_LT(fast.stats.span(), formula(s));
}

}  // namespace
}  // namespace tessera::mxutest
