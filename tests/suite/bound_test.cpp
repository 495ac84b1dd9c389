// The suite's core figures (suite/bound.h) and the workload figures of a GEMM, a convolution and a
// bert block graph (the bound itself: tests/core/roofline_test.cpp).
#include "suite/bound.h"

#include <gtest/gtest.h>

#include "suite/workload_graph.h"

namespace tessera::suite {
namespace {

TEST(SuiteBound, CoreFiguresComeFromTheCoreSpec) {
  core::CoreSpec s;
  s.clock_hz = 123e6;
  s.mxu_rows = 32;
  s.mxu_cols = 16;
  s.lanes = 64;
  s.sublanes = 4;
  s.hbm_bytes_per_cycle = 99.5;
  const CoreFigures f = core_figures(s);
  EXPECT_DOUBLE_EQ(f.clock_hz, 123e6);
  EXPECT_EQ(f.mxu_count, 1);
  EXPECT_EQ(f.mxu_rows, 32);
  EXPECT_EQ(f.mxu_cols, 16);
  EXPECT_EQ(f.lanes, 64);
  EXPECT_EQ(f.sublanes, 4);
  EXPECT_DOUBLE_EQ(f.hbm_bytes_per_cycle, 99.5);
}

TEST(SuiteWorkload, GemmReadsTwoMatricesAndWritesOne) {
  const Workload w = graph_workload(row_graph(parse_row("gemm_96")));
  EXPECT_EQ(w.macs, 96 * 96 * 96);
  EXPECT_EQ(w.hbm_bytes, 3 * 96 * 96 * 4);
  EXPECT_EQ(w.vector_ops, 0);
}

TEST(SuiteWorkload, ConvCountsItsWindowsOverTheOutput) {
  // x [2, 9, 9, 5], w [3, 3, 5, 7], stride 2, padding 1: output [2, 5, 5, 7].
  const Workload w = graph_workload(row_graph(parse_row("conv_2x9x9x5x7x3x2x1")));
  EXPECT_EQ(w.macs, int64_t{2} * 5 * 5 * 7 * 3 * 3 * 5);
  EXPECT_EQ(w.hbm_bytes, (2 * 9 * 9 * 5 + 3 * 3 * 5 * 7 + 2 * 5 * 5 * 7) * 4);
  EXPECT_EQ(w.vector_ops, 0);
}

TEST(SuiteWorkload, ABertBlockCountsItsProductsAndElementOpsAndReadsItsWeights) {
  const int64_t s = 512, d = 128, h = 2;  // bert_128: two heads of 64
  const Workload w = graph_workload(row_graph(parse_row("bert_128")));
  EXPECT_EQ(w.macs, 4 * s * d * d + 2 * s * s * d + 2 * s * d * 4 * d);
  const int64_t weights = 4 * (d * d + d) + (d * 4 * d + 4 * d) + (4 * d * d + d) + 2 * 2 * d;
  EXPECT_EQ(w.hbm_bytes, (s * d + weights + s * d) * 4);
  const int64_t adds = 4 * s * d + s * d + s * 4 * d + s * d + s * d;  // biases, residuals
  const int64_t attention = h * s * s + 5 * h * s * s + h * s;         // scale, softmax
  EXPECT_EQ(w.vector_ops, adds + s * 4 * d + attention + 2 * (7 * s * d + 4 * s));
}

}  // namespace
}  // namespace tessera::suite
