// Golden values for every vector ALU op, on the small machine (2 x 8 = 16 elements), through both
// interpreters. Inputs cover signed zeros, infinities, NaN, subnormals, ties and integer limits.
#include <cmath>
#include <functional>
#include <limits>

#include <gtest/gtest.h>

#include "core_test_util.h"
#include "numerics/bf16.h"

namespace tessera::core {
namespace {

using test::bits;
using test::fl;

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kSub = std::numeric_limits<float>::denorm_min();

std::vector<uint32_t> fvec(std::vector<float> v) {
  std::vector<uint32_t> w;
  for (float x : v) w.push_back(bits(x));
  return w;
}

const std::vector<uint32_t> kA = fvec({1.5f, -0.0f, 0.0f, kInf, -kInf, kNaN, kSub, 3.0e38f, 2.5f,
                                       -2.5f, 1e-40f, -7.25f, 100.0f, 0.1f, -1.0f, 65504.0f});
const std::vector<uint32_t> kB = fvec({2.25f, 0.0f, -0.0f, 1.0f, kInf, 1.0f, kSub, 3.0e38f, -2.5f,
                                       2.5f, -1e-40f, 7.25f, 0.0f, 0.2f, kNaN, 0.5f});
const std::vector<uint32_t> kI = {
    0u,  1u,  0xffffffffu, 0x7fffffffu, 0x80000000u, 12345u, 0xfffffff0u, 31u,
    32u, 33u, 7u,          0x55555555u, 0xaaaaaaaau, 100u,   0xffff0000u, 2u};
const std::vector<uint32_t> kJ = {
    5u, 1u, 1u,          1u,          0xffffffffu, 54321u,      4u,  1u,
    2u, 3u, 0xffffffffu, 0x0f0f0f0fu, 0x33333333u, 0x80000000u, 16u, 0xfffffffeu};

// Program: v1 = rows 0-1, v2 = rows 2-3, v3 = rows 4-5; `op` runs; v4 is stored at row 8.
std::vector<uint32_t> run_op(const std::string& op, const std::vector<uint32_t>& a,
                             const std::vector<uint32_t>& b,
                             const std::vector<uint32_t>& c = std::vector<uint32_t>(16, 0u)) {
  const CoreSpec spec = test::small_spec();
  const std::string text = ".vmem 0\n" + test::words_directive(a) + test::words_directive(b) +
                           test::words_directive(c) +
                           "  sli s0, 0 ;; sli s1, 9\n"
                           "  vld v1, [s0+0]\n  vld v2, [s0+2]\n  vld v3, [s0+4]\n"
                           "  vbcast v5, s1 ;; vbcasti v6, 0\n"
                           "  " +
                           op +
                           "\n"
                           "  vst v4, [s0+8]\n  halt\n";
  auto c_ = test::run_both(spec, text);
  return test::vmem_rows(c_->state(), spec, 8, 2);
}

struct BinCase {
  const char* op;
  bool ints;
  std::function<uint32_t(uint32_t, uint32_t)> expect;
};

TEST(VectorOps, EveryBinaryOpMatchesItsElementwiseDefinition) {
  auto F = [](auto fn) { return [fn](uint32_t a, uint32_t b) { return bits(fn(fl(a), fl(b))); }; };
  const std::vector<BinCase> cases = {
      {"vadd.f32 v4, v1, v2", false, F([](float a, float b) { return a + b; })},
      {"vsub.f32 v4, v1, v2", false, F([](float a, float b) { return a - b; })},
      {"vmul.f32 v4, v1, v2", false, F([](float a, float b) { return a * b; })},
      {"vadd.s32 v4, v1, v2", true, [](uint32_t a, uint32_t b) { return a + b; }},
      {"vsub.s32 v4, v1, v2", true, [](uint32_t a, uint32_t b) { return a - b; }},
      {"vmul.s32 v4, v1, v2", true, [](uint32_t a, uint32_t b) { return a * b; }},
      {"vmin.s32 v4, v1, v2", true,
       [](uint32_t a, uint32_t b) { return int32_t(a) < int32_t(b) ? a : b; }},
      {"vmax.s32 v4, v1, v2", true,
       [](uint32_t a, uint32_t b) { return int32_t(a) > int32_t(b) ? a : b; }},
      {"vand v4, v1, v2", true, [](uint32_t a, uint32_t b) { return a & b; }},
      {"vor v4, v1, v2", true, [](uint32_t a, uint32_t b) { return a | b; }},
      {"vxor v4, v1, v2", true, [](uint32_t a, uint32_t b) { return a ^ b; }},
      {"vshl v4, v1, v2", true, [](uint32_t a, uint32_t b) { return a << (b & 31); }},
      {"vshr v4, v1, v2", true, [](uint32_t a, uint32_t b) { return a >> (b & 31); }},
      {"vsra v4, v1, v2", true,
       [](uint32_t a, uint32_t b) { return uint32_t(int32_t(a) >> (b & 31)); }},
      {"vpack.bf16 v4, v1, v2", false,
       [](uint32_t a, uint32_t b) {
         return uint32_t(numerics::bf16_from_f32(fl(b)).bits) << 16 |
                numerics::bf16_from_f32(fl(a)).bits;
       }},
  };
  for (const BinCase& c : cases) {
    const auto& a = c.ints ? kI : kA;
    const auto& b = c.ints ? kJ : kB;
    const auto got = run_op(c.op, a, b);
    for (size_t i = 0; i < 16; ++i)
      EXPECT_EQ(got[i], c.expect(a[i], b[i])) << c.op << " element " << i;
  }
}

TEST(VectorOps, LiteralGoldensForArithmeticEdgeCases) {
  auto got = run_op("vadd.f32 v4, v1, v2", kA, kB);
  EXPECT_EQ(got[0], bits(3.75f));
  EXPECT_EQ(got[1], bits(0.0f));        // -0 + +0 = +0
  EXPECT_TRUE(std::isnan(fl(got[4])));  // -inf + inf
  EXPECT_EQ(got[6], bits(2 * kSub));    // subnormals kept
  EXPECT_EQ(got[7], bits(kInf));        // overflow
  got = run_op("vmul.f32 v4, v1, v2", kA, kB);
  EXPECT_EQ(got[2], bits(-0.0f));
  EXPECT_EQ(got[6], bits(0.0f));  // underflow to +0
  got = run_op("vfma.f32 v4, v1, v2, v3", fvec(std::vector<float>(16, 0.1f)),
               fvec(std::vector<float>(16, 10.0f)), fvec(std::vector<float>(16, -1.0f)));
  EXPECT_EQ(got[0], bits(std::fma(0.1f, 10.0f, -1.0f)));  // one rounding: 1.4901161e-08, not 0
  EXPECT_NE(got[0], bits(0.0f));
}

TEST(VectorOps, MinMaxLetNanWinAndOrderSignedZeros) {
  const auto mn = run_op("vmin.f32 v4, v1, v2", kA, kB);
  const auto mx = run_op("vmax.f32 v4, v1, v2", kA, kB);
  EXPECT_EQ(mn[0], bits(1.5f));
  EXPECT_EQ(mx[0], bits(2.25f));
  EXPECT_EQ(mn[1], bits(-0.0f));
  EXPECT_EQ(mx[1], bits(0.0f));
  EXPECT_EQ(mn[2], bits(-0.0f));
  EXPECT_EQ(mx[2], bits(0.0f));
  EXPECT_TRUE(std::isnan(fl(mn[5])));
  EXPECT_TRUE(std::isnan(fl(mx[14])));
  EXPECT_EQ(mn[4], bits(-kInf));
}

TEST(VectorOps, UnaryOpsAndConversions) {
  auto got = run_op("vabs.f32 v4, v1", kA, kB);
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(got[i], kA[i] & 0x7fffffffu);
  got = run_op("vneg.f32 v4, v1", kA, kB);
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(got[i], kA[i] ^ 0x80000000u);
  got = run_op("vmov v4, v1", kA, kB);
  EXPECT_EQ(got, kA);
  got = run_op("vcvt.f32.s32 v4, v1",
               fvec({2.5f, 3.5f, -2.5f, -3.5f, kNaN, 3e9f, -3e9f, kInf, -kInf, 0.49999997f, -0.0f,
                     1e-40f, 2147483520.0f, -2147483648.0f, 7.0f, -7.6f}),
               kB);
  const std::vector<int32_t> want = {2,          4,         -2,        -4, 0, INT32_MAX,
                                     INT32_MIN,  INT32_MAX, INT32_MIN, 0,  0, 0,
                                     2147483520, INT32_MIN, 7,         -8};
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(int32_t(got[i]), want[i]) << i;
  got = run_op("vcvt.s32.f32 v4, v1", kI, kJ);
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(got[i], bits(static_cast<float>(int32_t(kI[i])))) << i;
  EXPECT_EQ(got[3], bits(2147483648.0f));  // INT32_MAX rounds to nearest even
  got = run_op("vrnd.bf16 v4, v1", kA, kB);
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(got[i], bits(numerics::round_to_bf16(fl(kA[i])))) << i;
  EXPECT_EQ(got[13], 0x3dcd0000u);  // 0.1f = 0x3dcccccd rounds up
  got = run_op("vunpack.lo v4, v1", kI, kJ);
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(got[i], kI[i] << 16);
  got = run_op("vunpack.hi v4, v1", kI, kJ);
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(got[i], kI[i] & 0xffff0000u);
}

TEST(VectorOps, PackThenUnpackRecoversBothBf16Halves) {
  const auto packed = run_op("vpack.bf16 v4, v1, v2", kA, kB);
  const auto lo = run_op("vunpack.lo v4, v1", packed, kB);
  const auto hi = run_op("vunpack.hi v4, v1", packed, kB);
  for (size_t i = 0; i < 16; ++i) {
    EXPECT_EQ(lo[i], bits(numerics::round_to_bf16(fl(kA[i])))) << i;
    EXPECT_EQ(hi[i], bits(numerics::round_to_bf16(fl(kB[i])))) << i;
  }
}

TEST(VectorOps, BroadcastsAndIds) {
  auto got = run_op("vbcast v4, s1", kA, kB);
  EXPECT_EQ(got, std::vector<uint32_t>(16, 9u));
  got = run_op("vbcasti v4, -3", kA, kB);
  EXPECT_EQ(got, std::vector<uint32_t>(16, 0xfffffffdu));
  got = run_op("vbcasti v4, 1.5f", kA, kB);
  EXPECT_EQ(got, std::vector<uint32_t>(16, bits(1.5f)));
  got = run_op("vlaneid v4", kA, kB);
  for (uint32_t i = 0; i < 16; ++i) EXPECT_EQ(got[i], i % 8);
  got = run_op("vsublaneid v4", kA, kB);
  for (uint32_t i = 0; i < 16; ++i) EXPECT_EQ(got[i], i / 8);
}

struct CmpCase {
  const char* op;
  bool ints;
  std::function<bool(uint32_t, uint32_t)> expect;
};

TEST(VectorOps, ComparesSetMasksThatSelectAndCombine) {
  const std::vector<CmpCase> cases = {
      {"vcmpeq.f32", false, [](uint32_t a, uint32_t b) { return fl(a) == fl(b); }},
      {"vcmpne.f32", false, [](uint32_t a, uint32_t b) { return fl(a) != fl(b); }},
      {"vcmplt.f32", false, [](uint32_t a, uint32_t b) { return fl(a) < fl(b); }},
      {"vcmple.f32", false, [](uint32_t a, uint32_t b) { return fl(a) <= fl(b); }},
      {"vcmpeq.s32", true, [](uint32_t a, uint32_t b) { return a == b; }},
      {"vcmplt.s32", true, [](uint32_t a, uint32_t b) { return int32_t(a) < int32_t(b); }},
      {"vcmple.s32", true, [](uint32_t a, uint32_t b) { return int32_t(a) <= int32_t(b); }},
  };
  for (const CmpCase& c : cases) {
    const auto& a = c.ints ? kI : kA;
    const auto& b = c.ints ? kJ : kB;
    // vsel picks v5 (= 9) where the mask is set, else v6 (= 0).
    const auto got = run_op(std::string(c.op) + " m1, v1, v2\n  vsel v4, m1, v5, v6", a, b);
    for (size_t i = 0; i < 16; ++i)
      EXPECT_EQ(got[i], c.expect(a[i], b[i]) ? 9u : 0u) << c.op << " " << i;
  }
  // NaN: eq false, ne true, lt/le false.
  auto got = run_op("vcmpeq.f32 m1, v1, v1\n  vsel v4, m1, v5, v6", kA, kB);
  EXPECT_EQ(got[5], 0u);
  EXPECT_EQ(got[1], 9u);
  got = run_op("vcmpne.f32 m1, v1, v1\n  vsel v4, m1, v5, v6", kA, kB);
  EXPECT_EQ(got[5], 9u);
  // mask logic: m1 = a < b, m2 = a == b.
  const std::string setup = "vcmplt.s32 m1, v1, v2 ;; vcmpeq.s32 m2, v1, v2\n  ";
  auto lt = [](size_t i) { return int32_t(kI[i]) < int32_t(kJ[i]); };
  auto eq = [](size_t i) { return kI[i] == kJ[i]; };
  got = run_op(setup + "mor m3, m1, m2\n  vsel v4, m3, v5, v6", kI, kJ);
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(got[i], lt(i) || eq(i) ? 9u : 0u) << i;
  got = run_op(setup + "mand m3, m1, m2\n  vsel v4, m3, v5, v6", kI, kJ);
  EXPECT_EQ(got, std::vector<uint32_t>(16, 0u));
  got = run_op(setup + "mnot m3, m1\n  vsel v4, m3, v5, v6", kI, kJ);
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(got[i], lt(i) ? 0u : 9u) << i;
}

TEST(VectorOps, OperandsOfOneBundleAreReadBeforeAnySlotWrites) {
  // V0 writes v1 while V1 reads it: V1 must see the old v1 (a shadow copy), and swapping works.
  const auto got = run_op("vadd.s32 v1, v1, v2 ;; vmov v4, v1", kI, kJ);
  EXPECT_EQ(got, kI);
  const auto swapped = run_op("vmov v1, v2 ;; vmov v2, v1\n  vsub.s32 v4, v1, v2", kI, kJ);
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(swapped[i], kJ[i] - kI[i]);
}

}  // namespace
}  // namespace tessera::core
