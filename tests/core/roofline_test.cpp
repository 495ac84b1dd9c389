// The roofline bound (core/roofline.h) on hand-computed cases: each roof in turn the largest, the
// MXU roof over every MXU, ties, no work.
#include "core/roofline.h"

#include <gtest/gtest.h>

namespace tessera::core {
namespace {

// 2 MXUs of 4 x 8 (64 MACs per cycle), 16 HBM bytes per cycle, 2 x 8 vector elements per cycle.
CoreSpec small_core() {
  CoreSpec s;
  s.mxu_count = 2;
  s.mxu_rows = 4;
  s.mxu_cols = 8;
  s.lanes = 8;
  s.sublanes = 2;
  s.hbm_bytes_per_cycle = 16;
  return s;
}

TEST(Roofline, TheLargestRoofSetsTheBound) {
  Roofline b = roofline(small_core(), {.macs = 6400, .hbm_bytes = 320, .vector_ops = 160});
  EXPECT_DOUBLE_EQ(b.mxu, 100.0);
  EXPECT_DOUBLE_EQ(b.hbm, 20.0);
  EXPECT_DOUBLE_EQ(b.vector, 10.0);
  EXPECT_DOUBLE_EQ(b.cycles, 100.0);
  EXPECT_EQ(b.by, Roof::kMxu);
  b = roofline(small_core(), {.macs = 64, .hbm_bytes = 1600, .vector_ops = 16});
  EXPECT_DOUBLE_EQ(b.cycles, 100.0);
  EXPECT_EQ(b.by, Roof::kHbm);
  b = roofline(small_core(), {.macs = 64, .hbm_bytes = 16, .vector_ops = 1000});
  EXPECT_DOUBLE_EQ(b.cycles, 62.5);
  EXPECT_EQ(b.by, Roof::kVector);
}

TEST(Roofline, TheMxuRoofCountsEveryMxu) {
  CoreSpec one = small_core();
  one.mxu_count = 1;
  EXPECT_DOUBLE_EQ(roofline(one, {.macs = 6400}).mxu, 200.0);
  EXPECT_DOUBLE_EQ(roofline(small_core(), {.macs = 6400}).mxu, 100.0);
}

TEST(Roofline, TiesGoToTheFirstRoofAndNoWorkIsBoundByTheMxu) {
  const Roofline tie = roofline(small_core(), {.macs = 640, .hbm_bytes = 160, .vector_ops = 0});
  EXPECT_DOUBLE_EQ(tie.cycles, 10.0);
  EXPECT_EQ(tie.by, Roof::kMxu);
  const Roofline hv = roofline(small_core(), {.macs = 0, .hbm_bytes = 160, .vector_ops = 160});
  EXPECT_EQ(hv.by, Roof::kHbm);
  const Roofline none = roofline(small_core(), {});
  EXPECT_DOUBLE_EQ(none.cycles, 0.0);
  EXPECT_EQ(none.by, Roof::kMxu);
}

TEST(Roofline, RoofsAreNamedAsTheReportsSpellThem) {
  EXPECT_STREQ(to_string(Roof::kMxu), "mxu");
  EXPECT_STREQ(to_string(Roof::kHbm), "hbm");
  EXPECT_STREQ(to_string(Roof::kVector), "vector");
}

}  // namespace
}  // namespace tessera::core
