// Golden values for vector loads and stores, DMA and sync ops, through both interpreters.
#include <gtest/gtest.h>

#include "core_test_util.h"

namespace tessera::core {
namespace {

// vmem rows 0..15 hold word w = row * 8 + lane (small machine: 8 lanes).
std::string ramp_rows(int rows) {
  std::string s = ".vmem 0\n.word ";
  for (int i = 0; i < rows * 8; ++i) s += (i ? ", " : "") + std::to_string(i);
  return s + "\n";
}

std::vector<uint32_t> ramp(int from_row, int rows, int stride = 1) {
  std::vector<uint32_t> v;
  for (int r = 0; r < rows; ++r)
    for (int l = 0; l < 8; ++l) v.push_back(static_cast<uint32_t>((from_row + r * stride) * 8 + l));
  return v;
}

TEST(MemoryOps, VectorLoadsPlainStridedAndGathered) {
  const CoreSpec spec = test::small_spec();
  auto c = test::run_both(spec, ramp_rows(16) + R"(
  sli s1, 2 ;; sli s2, 5
  vld v1, [s1+1]
  vld.s v2, [s1+1], s2
  vlaneid v3 ;; vsublaneid v4
  vmul.s32 v5, v3, v3
  vld.x v6, [s1+0], v5           // word (2 * 8 + l*l) for both sublanes
  sli s3, -1
  vld.s v7, [s1+10], s3          // rows 12, 11
  halt
)");
  EXPECT_EQ(test::vreg_words(c->state(), 1), ramp(3, 2));
  EXPECT_EQ(test::vreg_words(c->state(), 2), ramp(3, 2, 5));
  std::vector<uint32_t> g;
  for (int s = 0; s < 2; ++s)
    for (uint32_t l = 0; l < 8; ++l) g.push_back(16 + l * l);
  EXPECT_EQ(test::vreg_words(c->state(), 6), g);
  EXPECT_EQ(test::vreg_words(c->state(), 7), ramp(12, 2, -1));
}

TEST(MemoryOps, VectorStoresPlainStridedScatteredAndMasked) {
  const CoreSpec spec = test::small_spec();
  auto c = test::run_both(spec, ramp_rows(2) + R"(
  sli s0, 0 ;; sli s1, 3
  vld v1, [s0+0]
  vst v1, [s0+20]
  vst.s v1, [s0+30], s1            // rows 30, 33
  vbcasti v2, 5
  vst.x v1, [s0+40], v2            // every element to word 40*8+5: the last (s=1, l=7) wins
  vlaneid v3
  vbcasti v4, 4
  vcmplt.s32 m1, v3, v4
  vst.m v1, [s0+50], m1            // lanes 0..3 only
  halt
)");
  const ArchState& s = c->state();
  EXPECT_EQ(test::vmem_rows(s, spec, 20, 2), ramp(0, 2));
  EXPECT_EQ(test::vmem_rows(s, spec, 30, 1), ramp(0, 1));
  EXPECT_EQ(test::vmem_rows(s, spec, 33, 1), ramp(1, 1));
  EXPECT_EQ(test::vmem_rows(s, spec, 31, 1), std::vector<uint32_t>(8, 0u));
  EXPECT_EQ(s.vmem[40 * 8 + 5], 15u);
  EXPECT_EQ(s.vmem[40 * 8 + 4], 0u);
  const auto m = test::vmem_rows(s, spec, 50, 2);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(m[i], i % 8 < 4 ? static_cast<uint32_t>(i) : 0u) << i;
}

TEST(MemoryOps, DmaMovesBetweenHbmAndBothMemoriesAndSetsFlags) {
  const CoreSpec spec = test::small_spec();
  auto c = test::run_both(spec, R"(
.hbm 1000
.word 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
.smem 0
.word 3, 2, 4, 8                // 2-D: 3 chunks of 2 words, src stride 4, dst stride 8
  sli s1, 1000 ;; sli s2, 12
  sli s3, 16                      // vmem word 16 = row 2
  dma.hv s3, s1, s2, 1
  sli s4, 100
  dma.hs s4, s1, s2, 2
  wait 1, 1
  wait 2, 1
  sli s5, 2000
  dma.vh s5, s3, s2, 3            // vmem -> HBM 2000
  sli s6, 3000
  dma.sh s6, s4, s2, 3            // smem -> HBM 3000
  sli s7, 0 ;; sli s8, 200
  dma.hv.2d s8, s1, s7, 4         // HBM 1000 (chunks 1000, 1004, 1008) -> vmem words 200, 208, 216
  sli s9, 4000
  dma.vh.2d s9, s3, s7, 4         // vmem 16, 20, 24 -> HBM 4000, 4008, 4016
  wait 3, 2
  wait 4, 2
  halt
)");
  const ArchState& s = c->state();
  for (uint32_t i = 0; i < 12; ++i) {
    EXPECT_EQ(s.vmem[16 + i], i + 1);
    EXPECT_EQ(s.smem[100 + i], i + 1);
    EXPECT_EQ(s.hbm.read(2000 + i), i + 1);
    EXPECT_EQ(s.hbm.read(3000 + i), i + 1);
  }
  for (uint32_t k = 0; k < 3; ++k)
    for (uint32_t j = 0; j < 2; ++j) {
      EXPECT_EQ(s.vmem[200 + 8 * k + j], 1 + 4 * k + j);
      EXPECT_EQ(s.hbm.read(4000 + 8 * k + j), 1 + 4 * k + j);
    }
  EXPECT_EQ(s.vmem[202], 0u);
  for (uint32_t f : s.flags) EXPECT_EQ(f, 0u);
}

TEST(MemoryOps, SignalAndWaitCountOnFlags) {
  const CoreSpec spec = test::small_spec();
  auto c = test::run_both(spec, R"(
  signal 5, 3
  signal 5, 4
  wait 5, 6
  halt
)");
  EXPECT_EQ(c->state().flags[5], 1u);
}

}  // namespace
}  // namespace tessera::core
