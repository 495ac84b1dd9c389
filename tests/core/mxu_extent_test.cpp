// The bit-parallel MXU multiplies only a weight tile's nonzero extent when that gives the whole
// array's bits: zero-padded tiles (few filters, short K) against the plain fma chain over all R
// rows and C columns, including the cases where the padding changes the bits (a non-finite input
// meets a zero weight; a chain that underflows to -0 meets a zero weight). Also: committing the
// accumulators' host memory keeps what they hold.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "core/core_test_util.h"
#include "core/mxu.h"
#include "numerics/bf16.h"
#include "numerics/matmul.h"

namespace tessera::core {
namespace {

struct Tile {
  int rows, cols;  // the nonzero extent; the rest of the R x C tile is +-0
};

class MxuExtent : public ::testing::Test {
 protected:
  const CoreSpec spec = test::default_spec();
  const int S = spec.sublanes, L = spec.lanes, R = spec.mxu_rows, C = spec.mxu_cols;
  std::mt19937 rng{7};

  // bf16 values, normal(0, 1), `n` of them.
  std::vector<float> values(size_t n, float scale = 1.0f) {
    std::normal_distribution<float> d(0.0f, scale);
    std::vector<float> v(n);
    for (float& x : v) x = numerics::round_to_bf16(d(rng) * scale);
    return v;
  }

  // An R x C tile, nonzero in [0, t.rows) x [0, t.cols); -0 elsewhere in every other row.
  std::vector<float> tile(Tile t, float scale = 1.0f) {
    std::vector<float> w = values(static_cast<size_t>(R) * C, scale);
    for (int k = 0; k < R; ++k)
      for (int n = 0; n < C; ++n)
        if (k >= t.rows || n >= t.cols) w[static_cast<size_t>(k) * C + n] = k % 2 ? -0.0f : 0.0f;
    return w;
  }

  void load(Mxu& m, const std::vector<float>& w) {
    std::vector<float> v(static_cast<size_t>(S) * L, 0.0f);
    for (int k0 = 0; k0 < R; k0 += S) {
      for (int s = 0; s < S; ++s)
        std::copy_n(&w[static_cast<size_t>(k0 + s) * C], C, &v[static_cast<size_t>(s) * L]);
      m.mlw(v.data(), m_now = m.mlw_ready(m_now));
    }
    m.mflip(m_now = m.mflip_ready(m_now));
  }

  // One push of S x R inputs (as a vreg, lanes beyond R zero); returns the S x C block popped.
  std::vector<float> push(Mxu& m, const std::vector<float>& in, MmulMode mode, int64_t acc = 0) {
    std::vector<float> v(static_cast<size_t>(S) * L, 0.0f);
    for (int s = 0; s < S; ++s)
      std::copy_n(&in[static_cast<size_t>(s) * R], R, &v[static_cast<size_t>(s) * L]);
    m.mmul(v.data(), mode, acc, m_now = m.mmul_ready(m_now));
    if (mode == MmulMode::Store || mode == MmulMode::Accumulate) return {};
    m.mpop(v.data(), m_now = m.mpop_ready(m_now));
    std::vector<float> out(static_cast<size_t>(S) * C);
    for (int s = 0; s < S; ++s)
      std::copy_n(&v[static_cast<size_t>(s) * L], C, &out[static_cast<size_t>(s) * C]);
    return out;
  }

  // The contract's chain over the whole array, from `acc`.
  std::vector<float> whole(const std::vector<float>& in, const std::vector<float>& w,
                           std::vector<float> acc) {
    numerics::mxu_matmul_accumulate_reference(in.data(), R, w.data(), C, acc.data(), C, S, R, C);
    return acc;
  }

  void expect_bits(const std::vector<float>& got, const std::vector<float>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
          << "element " << i << ": " << got[i] << " vs " << want[i];
  }

  int64_t m_now = 0;
};

TEST_F(MxuExtent, PaddedTilesGiveTheWholeArraysBits) {
  for (const Tile t : {Tile{25, 32}, Tile{128, 64}, Tile{100, 128}, Tile{1, 1}, Tile{0, 0}}) {
    Mxu m(spec);
    const std::vector<float> w = tile(t);
    load(m, w);
    const std::vector<float> zeros(static_cast<size_t>(S) * C, 0.0f);
    const std::vector<float> a = values(static_cast<size_t>(S) * R);
    const std::vector<float> b = values(static_cast<size_t>(S) * R);
    SCOPED_TRACE(testing::Message() << "extent " << t.rows << " x " << t.cols);
    expect_bits(push(m, a, MmulMode::ToFifo), whole(a, w, zeros));
    push(m, a, MmulMode::Store, 3);
    expect_bits(push(m, b, MmulMode::AccumulateOut, 3), whole(b, w, whole(a, w, zeros)));
  }
}

TEST_F(MxuExtent, ANonFiniteInputMeetingAZeroWeightGivesNaNAsOnTheWholeArray) {
  Mxu m(spec);
  const std::vector<float> w = tile({25, 32});
  load(m, w);
  const std::vector<float> zeros(static_cast<size_t>(S) * C, 0.0f);
  std::vector<float> a = values(static_cast<size_t>(S) * R);
  a[100] = std::numeric_limits<float>::infinity();  // row 0, k = 100: outside the extent
  a[R + 7] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> want = whole(a, w, zeros);
  EXPECT_TRUE(std::isnan(want[0]));
  EXPECT_TRUE(std::isnan(want[C - 1]));
  expect_bits(push(m, a, MmulMode::ToFifo), want);
}

TEST_F(MxuExtent, AChainThatUnderflowsToMinusZeroBecomesPlusZeroOnTheWholeArray) {
  Mxu m(spec);
  // One tiny weight and tiny negative inputs: the product underflows, fma rounds it to -0; the
  // zero weights below it add +0 (positive inputs), which turns -0 into +0.
  std::vector<float> w(static_cast<size_t>(R) * C, 0.0f);
  w[0] = std::bit_cast<float>(0x00800000u);  // the smallest normal, a bf16 value
  load(m, w);
  std::vector<float> a(static_cast<size_t>(S) * R, 1.0f);
  for (int s = 0; s < S; ++s) a[static_cast<size_t>(s) * R] = -std::bit_cast<float>(0x00800000u);
  const std::vector<float> zeros(static_cast<size_t>(S) * C, 0.0f);
  const std::vector<float> want = whole(a, w, zeros);
  EXPECT_EQ(std::bit_cast<uint32_t>(want[0]), 0u);
  expect_bits(push(m, a, MmulMode::ToFifo), want);
  // Accumulating onto the same: the accumulator block holds +0 then, as on the whole array.
  push(m, a, MmulMode::Store, 1);
  expect_bits(push(m, a, MmulMode::AccumulateOut, 1), whole(a, w, want));
}

TEST_F(MxuExtent, CommittingTheAccumulatorsKeepsWhatTheyHold) {
  Mxu m(spec);
  m.commit_accumulators();  // fresh: all zeros still
  const std::vector<float> w = tile({128, 128});
  load(m, w);
  const std::vector<float> zeros(static_cast<size_t>(S) * C, 0.0f);
  const std::vector<float> a = values(static_cast<size_t>(S) * R);
  push(m, a, MmulMode::Store, 5);
  m.commit_accumulators();
  expect_bits(push(m, a, MmulMode::AccumulateOut, 5), whole(a, w, whole(a, w, zeros)));
  expect_bits(push(m, a, MmulMode::AccumulateOut, 6), whole(a, w, zeros));
}

}  // namespace
}  // namespace tessera::core
