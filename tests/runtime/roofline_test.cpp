// The roofline bound of a layer's work (runtime/roofline.h).
#include "runtime/roofline.h"

#include <gtest/gtest.h>

namespace tessera::runtime {
namespace {

core::CoreSpec spec_128x128_400() {
  core::CoreSpec s;
  s.mxu_rows = 128;
  s.mxu_cols = 128;
  s.hbm_bytes_per_cycle = 400;
  return s;
}

TEST(Roofline, ComputeBoundWhenMacsTakeLonger) {
  const RooflineBound b = roofline_bound(spec_128x128_400(), 16384 * 10, 400 * 4);
  EXPECT_DOUBLE_EQ(b.cycles, 10.0);
  EXPECT_EQ(b.by, "compute");
}

TEST(Roofline, MemoryBoundWhenBytesTakeLonger) {
  const RooflineBound b = roofline_bound(spec_128x128_400(), 16384 * 2, 1000);
  EXPECT_DOUBLE_EQ(b.cycles, 2.5);
  EXPECT_EQ(b.by, "memory");
}

TEST(Roofline, TieAndNoWorkAreCompute) {
  EXPECT_EQ(roofline_bound(spec_128x128_400(), 16384, 400).by, "compute");
  const RooflineBound none = roofline_bound(spec_128x128_400(), 0, 0);
  EXPECT_DOUBLE_EQ(none.cycles, 0.0);
  EXPECT_EQ(none.by, "compute");
}

}  // namespace
}  // namespace tessera::runtime
