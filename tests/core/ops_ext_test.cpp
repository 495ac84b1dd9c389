// Golden values for the transpose, reduce/permute, EUP, RNG and matrix ops, through both
// interpreters.
#include <cmath>

#include <gtest/gtest.h>

#include "core_test_util.h"
#include "numerics/bf16.h"
#include "numerics/eup.h"
#include "numerics/matmul.h"
#include "numerics/reduce.h"

namespace tessera::core {
namespace {

using test::bits;
using test::fl;

std::vector<float> values(int n, float scale, float offset) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i)
    v.push_back(offset + scale * static_cast<float>((i * 37) % 23) - 5.0f * scale);
  return v;
}

std::string floats_directive(const std::vector<float>& v) {
  std::vector<uint32_t> w;
  for (float x : v) w.push_back(bits(x));
  return test::words_directive(w);
}

TEST(ExtOps, TransposeUnitTransposesAWholeMatrixOfSlices) {
  const CoreSpec spec = test::small_spec();  // 8 x 8 matrix = 4 slices of 2 x 8
  std::vector<uint32_t> m(64);
  for (uint32_t i = 0; i < 64; ++i) m[i] = i;
  auto c = test::run_both(spec, ".vmem 0\n" + test::words_directive(m) + R"(
  sli s0, 0
  vld v0, [s0+0]
  vld v1, [s0+2]
  vld v2, [s0+4]
  vld v3, [s0+6]
  xpush v0
  xpush v1
  xpush v2 ;; xpush v3
  xpop v4 ;; xpop v5
  xpop v6
  xpop v7
  vst v4, [s0+8]
  vst v5, [s0+10]
  vst v6, [s0+12]
  vst v7, [s0+14]
  halt
)");
  const auto t = test::vmem_rows(c->state(), spec, 8, 8);
  for (int r = 0; r < 8; ++r)
    for (int col = 0; col < 8; ++col) EXPECT_EQ(t[r * 8 + col], m[col * 8 + r]) << r << "," << col;
}

TEST(ExtOps, ReducePermuteOpsFollowTheirDefinitions) {
  const CoreSpec spec = test::small_spec();
  const std::vector<float> a = values(16, 0.37f, 0.01f);
  std::vector<uint32_t> idx = {7, 6, 5, 4, 3, 2, 1, 0, 9, 0xffffffffu, 2, 2, 0, 1, 0, 3};
  auto c = test::run_both(spec, ".vmem 0\n" + floats_directive(a) + test::words_directive(idx) + R"(
  sli s0, 0 ;; sli s1, 3
  vld v0, [s0+0]
  vld v1, [s0+2]
  rrot v0, s1 ;; rperm v0, v1
  rsum v0 ;; rmax v0
  rpop v2 ;; rpop v3
  rpop v4
  rpop v5
  rsegsum v0, 4 ;; rsum.perm v0, v1
  rpop v6
  rpop v7
  sli s1, -1
  rrot v0, s1
  rpop v8
  halt
)");
  const ArchState& s = c->state();
  for (int r = 0; r < 2; ++r) {
    const float* row = a.data() + r * 8;
    const float sum = numerics::tree_sum(row, 8), mx = numerics::tree_max(row, 8);
    const float sums[2] = {numerics::tree_sum(a.data(), 8), numerics::tree_sum(a.data() + 8, 8)};
    for (int l = 0; l < 8; ++l) {
      const int i = r * 8 + l;
      EXPECT_EQ(s.vreg(2)[i], bits(row[(l - 3 + 8) % 8])) << i;
      EXPECT_EQ(s.vreg(3)[i], bits(row[idx[i] % 8])) << i;
      EXPECT_EQ(s.vreg(4)[i], bits(sum)) << i;
      EXPECT_EQ(s.vreg(5)[i], bits(mx)) << i;
      EXPECT_EQ(s.vreg(6)[i], bits(numerics::tree_sum(row + (l / 4) * 4, 4))) << i;
      EXPECT_EQ(s.vreg(7)[i], bits(sums[idx[i] % 2])) << i;
      EXPECT_EQ(s.vreg(8)[i], bits(row[(l + 1) % 8])) << i;
    }
  }
}

TEST(ExtOps, EupFunctionsAreTheNumericsDefinitions) {
  const CoreSpec spec = test::small_spec();
  const std::vector<float> a = {0.0f,   1.0f,  4.0f,   9.0f, -1.0f, 0.5f,     100.0f,    -0.0f,
                                1e-40f, 88.7f, -88.0f, 3.0f, 0.25f, INFINITY, -INFINITY, NAN};
  auto c = test::run_both(spec, ".vmem 0\n" + floats_directive(a) + R"(
  sli s0, 0
  vld v0, [s0+0]
  eexp v0 ;; elog v0
  epop v1 ;; ercp v0
  epop v2 ;; ersqrt v0
  epop v3 ;; esqrt v0
  epop v4 ;; etanh v0
  epop v5
  epop v6
  halt
)");
  const ArchState& s = c->state();
  float (*fns[6])(float) = {numerics::eup_exp,   numerics::eup_log,  numerics::eup_rcp,
                            numerics::eup_rsqrt, numerics::eup_sqrt, numerics::eup_tanh};
  for (int f = 0; f < 6; ++f)
    for (int i = 0; i < 16; ++i) EXPECT_EQ(s.vreg(1 + f)[i], bits(fns[f](a[i]))) << f << " " << i;
  EXPECT_EQ(s.vreg(1)[0], bits(1.0f));   // exp(0)
  EXPECT_EQ(s.vreg(2)[1], bits(0.0f));   // log(1)
  EXPECT_EQ(s.vreg(3)[2], bits(0.25f));  // 1/4
  EXPECT_EQ(s.vreg(3)[7], bits(-INFINITY));
  EXPECT_EQ(s.vreg(4)[2], bits(0.5f));  // rsqrt(4)
  EXPECT_EQ(s.vreg(5)[3], bits(3.0f));  // sqrt(9)
  EXPECT_TRUE(std::isnan(fl(s.vreg(5)[4])));
  EXPECT_EQ(s.vreg(6)[7], bits(-0.0f));  // tanh(-0)
  EXPECT_EQ(s.vreg(1)[13], bits(INFINITY));
  EXPECT_EQ(s.vreg(1)[14], bits(0.0f));
}

TEST(ExtOps, RngGivesThePhiloxStreamOfItsSeed) {
  const CoreSpec spec = test::small_spec();
  auto c = test::run_both(spec, R"(
  rng v1
  sli s1, 1234
  rng.seed s1
  rng v2
  rng v3
  halt
)");
  const ArchState& s = c->state();
  auto stream = [](uint32_t seed, uint64_t word) {
    const uint32_t ctr[4] = {static_cast<uint32_t>(word / 4), 0, 0, 0},
                   key[2] = {seed, 0x7e55e7a0u};
    uint32_t out[4];
    philox4x32_10(ctr, key, out);
    return out[word % 4];
  };
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(s.vreg(1)[i], stream(0, static_cast<uint64_t>(i)));
    EXPECT_EQ(s.vreg(2)[i], stream(1234, static_cast<uint64_t>(i)));
    EXPECT_EQ(s.vreg(3)[i], stream(1234, static_cast<uint64_t>(16 + i)));
  }
  EXPECT_NE(test::vreg_words(s, 2), test::vreg_words(s, 3));
}

// Host reference of one mmul block: rows of `in` (2 x 8) through weights W (8 x 8), chained from
// acc.
void reference_block(const std::vector<float>& in, const std::vector<float>& w,
                     std::vector<float>& acc) {
  std::vector<float> a(in), ww(w);
  numerics::round_to_bf16(a.data(), static_cast<long>(a.size()));
  numerics::round_to_bf16(ww.data(), static_cast<long>(ww.size()));
  numerics::mxu_matmul_accumulate_reference(a.data(), 8, ww.data(), 8, acc.data(), 8, 2, 8, 8);
}

TEST(ExtOps, MatrixOpsMultiplyStoreAccumulateAndPop) {
  const CoreSpec spec = test::small_spec();
  const std::vector<float> w = values(64, 0.173f, 0.003f), w2 = values(64, -0.291f, 0.7f);
  const std::vector<float> x = values(16, 1.37f, 0.11f), y = values(16, -0.77f, 0.5f);
  auto c = test::run_both(spec, ".vmem 0\n" + floats_directive(w) + floats_directive(w2) +
                                    floats_directive(x) + floats_directive(y) + R"(
  sli s0, 0 ;; sli s1, 3
  vld v0, [s0+0]
  vld v1, [s0+2]
  vld v2, [s0+4]
  vld v3, [s0+6]
  mlw v0
  mlw v1
  mlw v2
  mlw v3
  vld v4, [s0+8]
  vld v5, [s0+10]
  vld v6, [s0+12]
  vld v7, [s0+14]
  vld v8, [s0+16]
  vld v9, [s0+18]
  mflip ;; mmul v8                       // the flip comes first in slot order: W is active
  mlw v4 ;; mmul.st v8, s1               // acc block 3 = x W
  mlw v5
  mlw v6
  mlw v7
  mflip ;; mmul.acc.out v9, s1           // acc block 3 += y W2, then pushed
  mmul.acc v8, s1
  mpop v10
  mpop v11
  halt
)");
  const ArchState& s = c->state();
  std::vector<float> r1(16, 0.0f), r2(16, 0.0f);
  reference_block(x, w, r1);
  reference_block(x, w, r2);
  reference_block(y, w2, r2);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(s.vreg(10)[i], bits(r1[i])) << i;
    EXPECT_EQ(s.vreg(11)[i], bits(r2[i])) << i;
  }
}

}  // namespace
}  // namespace tessera::core
