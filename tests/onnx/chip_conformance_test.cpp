// ONNX's backend node tests on the simulated tensor core (onnx/conformance.h): no test that passes
// on the host fp32 executor fails on the chip (a graph the compiler cannot lower is skipped with
// its reason), at least the 260 of the ops lowered so far pass, and the tolerance classes follow
// where the arithmetic runs (bf16 with an MXU op, fp32 on the vector unit and the EUP).
#include <filesystem>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "onnx/conformance.h"

namespace tessera::onnx_import {
namespace {

using Status = NodeTestResult::Status;

class OnnxChipConformance : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::is_directory(kNodeTestDir))
      GTEST_SKIP() << kNodeTestDir << " is missing (Debian package libonnx-testdata)";
  }
};

TEST_F(OnnxChipConformance, NoTestThatPassesOnTheHostFailsOnTheChip) {
  const std::set<std::string> mxu = {"MatMul", "Gemm", "Conv"};
  const std::set<std::string> vector = {"Exp",   "Log",    "Sqrt",    "Reciprocal", "Sigmoid",
                                        "Tanh",  "Erf",    "Relu",    "Add",        "Concat",
                                        "Slice", "Expand", "Softmax", "ReduceSum"};
  int passed = 0;
  for (const NodeTestResult& r : run_node_tests(kNodeTestDir)) {
    if (r.status != Status::kPassed) {
      EXPECT_EQ(r.chip, Status::kSkipped) << r.test << ": the chip runs host passes only";
      continue;
    }
    // Skipped: an op without a tensor-core lowering (the compiler's reason, listed in the docs).
    EXPECT_NE(r.chip, Status::kFailed) << r.test << ": " << r.chip_reason;
    if (r.chip != Status::kPassed) continue;
    ++passed;
    if (mxu.count(r.op)) {
      EXPECT_EQ(r.chip_tolerance, "bf16") << r.test;
    }
    if (vector.count(r.op)) {
      EXPECT_EQ(r.chip_tolerance, "fp32") << r.test;
    }
  }
  EXPECT_GE(passed, 260);  // every host pass of the ops lowered so far
}

TEST_F(OnnxChipConformance, TheNewlyLoweredOpsRunOnTheChip) {
  for (const char* test :
       {"test_exp", "test_log", "test_sqrt", "test_reciprocal", "test_sigmoid", "test_tanh",
        "test_erf", "test_expand_dim_changed", "test_concat_3d_axis_1", "test_slice_neg_steps",
        "test_reduce_sum_keepdims_example", "test_reduce_max_negative_axes_keepdims_random",
        "test_clip_splitbounds", "test_maxpool_2d_dilations", "test_maxpool_1d_default",
        "test_averagepool_1d_default"}) {
    const NodeTestResult r = run_node_test((std::filesystem::path(kNodeTestDir) / test).string());
    EXPECT_EQ(r.status, Status::kPassed) << test << ": " << r.reason;
    EXPECT_EQ(r.chip, Status::kPassed) << test << ": " << r.chip_reason;
  }
}

}  // namespace
}  // namespace tessera::onnx_import
