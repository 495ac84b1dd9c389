// The reference executor's convolution and pooling kernels against their definitions written out
// plainly: a convolution run block by block gives the bits of one matmul over the whole im2col
// matrix (fp32 through OpenBLAS, chip numerics, f64); pooling takes each window's first maximum and
// its gradient adds dy in output order.
#include <bit>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "common/splitmix64.h"
#include "graph/kernels.h"

namespace tessera::graph::kernels {
namespace {

template <typename T>
std::vector<T> random_values(long n, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<T> v(static_cast<size_t>(n));
  for (T& x : v) x = static_cast<T>(2.0 * rng.unit() - 1.0);
  return v;
}

// The im2col matrix [(n, oh, ow), (kh, kw, ci)], out-of-image taps zero.
template <typename T>
std::vector<T> whole_im2col(const T* x, const ConvGeom& g) {
  const long K = static_cast<long>(g.kh) * g.kw * g.ci;
  std::vector<T> cols(static_cast<size_t>(g.n) * g.oh * g.ow * K, T(0));
  long row = 0;
  for (int n = 0; n < g.n; ++n)
    for (int oh = 0; oh < g.oh; ++oh)
      for (int ow = 0; ow < g.ow; ++ow, ++row)
        for (int kh = 0; kh < g.kh; ++kh)
          for (int kw = 0; kw < g.kw; ++kw)
            for (int c = 0; c < g.ci; ++c) {
              const int h = oh * g.stride - g.pad + kh, w = ow * g.stride - g.pad + kw;
              if (h < 0 || h >= g.h || w < 0 || w >= g.w) continue;
              cols[static_cast<size_t>(row * K + (kh * g.kw + kw) * g.ci + c)] =
                  x[((static_cast<long>(n) * g.h + h) * g.w + w) * g.ci + c];
            }
  return cols;
}

template <typename T>
void expect_conv_is_one_matmul(const Matmul& mm, const ConvGeom& g) {
  const std::vector<T> x = random_values<T>(static_cast<long>(g.n) * g.h * g.w * g.ci, 1);
  const std::vector<T> w = random_values<T>(static_cast<long>(g.kh) * g.kw * g.ci * g.co, 2);
  const long M = static_cast<long>(g.n) * g.oh * g.ow;
  std::vector<T> got(static_cast<size_t>(M * g.co)), want(got.size());
  conv2d(x.data(), w.data(), got.data(), g, mm);
  const std::vector<T> cols = whole_im2col(x.data(), g);
  mm(cols.data(), w.data(), want.data(), static_cast<int>(M), g.kh * g.kw * g.ci, g.co);
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(got[i], want[i]) << "element " << i << " (" << numerics_name(mm.mode) << ")";
}

// 8 x 28 x 28 x 32 -> 64, 5 x 5, pad 2: 6,272 output rows, K = 800, so several blocks and a last
// one joined to the block before it; and a strided case with a small K.
constexpr ConvGeom kBig{8, 28, 28, 32, 5, 5, 64, 1, 2, 28, 28};
constexpr ConvGeom kStrided{16, 31, 29, 3, 3, 3, 8, 2, 1, 16, 15};

TEST(ConvKernels, BlockByBlockIsOneMatmulOverTheWholeIm2col) {
  for (const ConvGeom& g : {kBig, kStrided}) {
    expect_conv_is_one_matmul<float>(Matmul{Numerics::kF32, true}, g);
    expect_conv_is_one_matmul<float>(Matmul{Numerics::kChip, false}, g);
    expect_conv_is_one_matmul<double>(Matmul{Numerics::kF64, false}, g);
  }
}

TEST(ConvKernels, MaxPoolTakesEachWindowsFirstMaximumAndItsGradientAddsInOutputOrder) {
  // 3 x 3 windows at stride 2 overlap; values from a 4-value set, so windows hold ties.
  const ConvGeom g{2, 9, 7, 5, 3, 3, 5, 2, 0, 4, 3};
  std::vector<float> x = random_values<float>(2L * 9 * 7 * 5, 3);
  for (float& v : x) v = static_cast<float>(static_cast<int>(v * 2.0f));
  const std::vector<float> dy = random_values<float>(2L * 4 * 3 * 5, 4);
  std::vector<float> y(dy.size()), dx(x.size()), want_y(dy.size()), want_dx(x.size(), 0.0f);
  maxpool2d(x.data(), y.data(), g);
  maxpool2d_grad(dy.data(), x.data(), dx.data(), g);
  long out = 0;
  for (int n = 0; n < g.n; ++n)
    for (int oh = 0; oh < g.oh; ++oh)
      for (int ow = 0; ow < g.ow; ++ow)
        for (int c = 0; c < g.ci; ++c, ++out) {
          long best = -1;
          for (int kh = 0; kh < g.kh; ++kh)
            for (int kw = 0; kw < g.kw; ++kw) {
              const long i = ((n * 9L + oh * 2 + kh) * 7 + ow * 2 + kw) * 5 + c;
              if (best < 0 || x[static_cast<size_t>(i)] > x[static_cast<size_t>(best)]) best = i;
            }
          want_y[static_cast<size_t>(out)] = x[static_cast<size_t>(best)];
          want_dx[static_cast<size_t>(best)] += dy[static_cast<size_t>(out)];
        }
  for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], want_y[i]) << i;
  for (size_t i = 0; i < dx.size(); ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(dx[i]), std::bit_cast<uint32_t>(want_dx[i])) << i;
}

}  // namespace
}  // namespace tessera::graph::kernels
