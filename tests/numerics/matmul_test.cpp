#include "numerics/matmul.h"

#include <bit>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "numerics/bf16.h"
#include "numerics/reduce.h"

namespace tessera::numerics {
namespace {

std::vector<float> random_bf16(int n, std::mt19937& rng, float scale) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = round_to_bf16(dist(rng));
  return v;
}

void expect_bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(a[i]), std::bit_cast<uint32_t>(b[i])) << "element " << i;
}

// Every vectorised path must follow the reference fma chain exactly, for every shape class:
// full blocks, ragged columns (AVX-512's masked tail vector, AVX2's scalar tail), fewer rows than
// a block, uneven row and vector splits, K of 1; the output a sub-block of a wider array (ldc > N)
// so that writes beyond N would show. Paths the host lacks are skipped.
TEST(MxuMatmul, EveryPathIsBitIdenticalToReferenceOverShapes) {
  using Path = void (*)(const float*, int, const float*, int, float*, int, int, int, int);
  struct Named {
    const char* name;
    bool available;
    Path run;
  };
#if defined(__x86_64__)
  const Named paths[] = {
      {"dispatch", true, mxu_matmul_accumulate},
      {"avx512", detail::mxu_matmul_avx512_supported(), detail::mxu_matmul_accumulate_avx512},
      {"avx2", detail::mxu_matmul_avx2_supported(), detail::mxu_matmul_accumulate_avx2}};
#else
  const Named paths[] = {{"dispatch", true, mxu_matmul_accumulate}};
#endif
  const int shapes[][3] = {{8, 128, 128}, {1, 1, 1},    {3, 7, 5},      {8, 8, 8},  {2, 8, 8},
                           {13, 33, 47},  {8, 128, 17}, {16, 256, 128}, {9, 1, 31}, {7, 64, 200},
                           {11, 5, 16},   {6, 9, 15},   {25, 40, 65},   {4, 3, 80}};
  for (const Named& path : paths) {
    if (!path.available) continue;
    std::mt19937 rng(1);
    for (const auto& s : shapes) {
      const int M = s[0], K = s[1], N = s[2], ldc = N + 3;
      auto a = random_bf16(M * K, rng, 1.0f);
      auto w = random_bf16(K * N, rng, 1.0f);
      auto init = random_bf16(M * ldc, rng, 4.0f);
      std::vector<float> fast = init, ref = init;
      path.run(a.data(), K, w.data(), N, fast.data(), ldc, M, K, N);
      mxu_matmul_accumulate_reference(a.data(), K, w.data(), N, ref.data(), ldc, M, K, N);
      SCOPED_TRACE(std::string(path.name) + " " + std::to_string(M) + "x" + std::to_string(K) +
                   "x" + std::to_string(N));
      expect_bitwise_equal(fast, ref);
    }
  }
}

// Splitting K into tiles that continue the same accumulator chain gives the same bits as one
// pass over the whole K: the contract for accumulate-into-result.
TEST(MxuMatmul, KTilesContinueTheSameChain) {
  std::mt19937 rng(2);
  const int M = 8, K = 384, N = 64;
  auto a = random_bf16(M * K, rng, 1.0f);
  auto w = random_bf16(K * N, rng, 1.0f);
  std::vector<float> whole(M * N, 0.0f), tiled(M * N, 0.0f);
  mxu_matmul_accumulate(a.data(), K, w.data(), N, whole.data(), N, M, K, N);
  for (int k0 = 0; k0 < K; k0 += 128)
    mxu_matmul_accumulate(a.data() + k0, K, w.data() + k0 * N, N, tiled.data(), N, M, 128, N);
  expect_bitwise_equal(whole, tiled);
}

// Products of bf16 values are exact; only the additions round. With small integers nothing
// rounds at all, so the result is the exact integer dot product.
TEST(MxuMatmul, SmallIntegerProductsAreExact) {
  const int M = 4, K = 128, N = 32;
  std::vector<float> a(M * K), w(K * N), acc(M * N, 0.0f);
  for (int i = 0; i < M * K; ++i) a[i] = static_cast<float>(i % 7 - 3);
  for (int i = 0; i < K * N; ++i) w[i] = static_cast<float>(i % 5 - 2);
  mxu_matmul_accumulate(a.data(), K, w.data(), N, acc.data(), N, M, K, N);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      long exact = 0;
      for (int k = 0; k < K; ++k)
        exact += static_cast<long>(a[m * K + k]) * static_cast<long>(w[k * N + n]);
      ASSERT_EQ(acc[m * N + n], static_cast<float>(exact));
    }
}

// The order is k ascending: a large value first absorbs a tiny one; the reverse order would not.
TEST(MxuMatmul, AccumulationOrderIsTopRowToBottom) {
  const float a[3] = {1.0f, 1.0f, 1.0f};
  const float w[3] = {16777216.0f /*2^24*/, 1.0f, 1.0f};
  float acc = 0.0f;
  mxu_matmul_accumulate(a, 3, w, 1, &acc, 1, 1, 3, 1);
  EXPECT_EQ(acc, 16777216.0f);  // 2^24 + 1 rounds back to 2^24, twice
  const float w_rev[3] = {1.0f, 1.0f, 16777216.0f};
  float acc_rev = 0.0f;
  mxu_matmul_accumulate(a, 3, w_rev, 1, &acc_rev, 1, 1, 3, 1);
  EXPECT_EQ(acc_rev, 16777218.0f);  // 1 + 1 = 2 first, then exact
}

TEST(MxuMatmul, NanAndInfinityPropagate) {
  const float inf = std::numeric_limits<float>::infinity();
  const float a[2] = {1.0f, 0.0f};
  const float w[2] = {inf, inf};
  float acc = 0.0f;
  mxu_matmul_accumulate(a, 2, w, 1, &acc, 1, 1, 2, 1);
  EXPECT_TRUE(std::isnan(acc)) << "0 * inf is NaN and poisons the sum";
}

TEST(TreeReduce, SumFollowsPairwiseTree) {
  // (big + -big) + (1 + 1) = 2 in the tree; a left-to-right sum would give 1 + 1 = 2 as well,
  // so use values where the orders differ: ((2^24 + 1) + (1 + 0)) vs sequential.
  const float x[4] = {16777216.0f, 1.0f, 1.0f, 0.0f};
  // tree: (2^24 + 1) = 2^24 ; (1 + 0) = 1 ; 2^24 + 1 = 2^24
  EXPECT_EQ(tree_sum(x, 4), 16777216.0f);
  const float y[4] = {1.0f, 1.0f, 16777216.0f, 0.0f};
  // tree: (1 + 1) = 2 ; (2^24 + 0) ; 2 + 2^24 = 2^24 + 2 exactly
  EXPECT_EQ(tree_sum(y, 4), 16777218.0f);
  EXPECT_EQ(tree_sum(x, 3), 16777216.0f) << "padding with +0";
}

TEST(TreeReduce, MaxHandlesNanAndSignedZero) {
  const float z[2] = {-0.0f, 0.0f};
  EXPECT_FALSE(std::signbit(tree_max(z, 2)));
  const float n[3] = {1.0f, std::nanf(""), 2.0f};
  EXPECT_TRUE(std::isnan(tree_max(n, 3)));
}

}  // namespace
}  // namespace tessera::numerics
