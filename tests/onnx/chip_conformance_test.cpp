// ONNX's backend node tests on the simulated tensor core (onnx/conformance.h): every test that
// passes on the host fp32 executor passes on the chip within its tolerance class, and the classes
// follow where the arithmetic runs (bf16 with an MXU op, else fp32).
#include <filesystem>

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

TEST_F(OnnxChipConformance, EveryTestThatPassesOnTheHostPassesOnTheChip) {
  int ran = 0;
  for (const NodeTestResult& r : run_node_tests(kNodeTestDir)) {
    if (r.status != Status::kPassed) {
      EXPECT_EQ(r.chip, Status::kSkipped) << r.test << ": the chip runs host passes only";
      continue;
    }
    EXPECT_EQ(r.chip, Status::kPassed) << r.test << ": " << r.chip_reason;
    ++ran;
    const bool mxu = r.op == "MatMul" || r.op == "Gemm" || r.op == "Conv";
    EXPECT_EQ(r.chip_tolerance, mxu ? "bf16" : "fp32") << r.test;
  }
  EXPECT_GE(ran, 182);
}

TEST_F(OnnxChipConformance, TheNewlyLoweredOpsRunOnTheChip) {
  for (const char* test :
       {"test_exp", "test_log", "test_sqrt", "test_reciprocal", "test_sigmoid", "test_tanh",
        "test_erf", "test_expand_dim_changed", "test_concat_3d_axis_1", "test_slice_neg_steps",
        "test_reduce_sum_keepdims_example"}) {
    const NodeTestResult r = run_node_test((std::filesystem::path(kNodeTestDir) / test).string());
    EXPECT_EQ(r.status, Status::kPassed) << test << ": " << r.reason;
    EXPECT_EQ(r.chip, Status::kPassed) << test << ": " << r.chip_reason;
  }
}

}  // namespace
}  // namespace tessera::onnx_import
