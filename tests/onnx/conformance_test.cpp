// ONNX's backend node tests (Debian libonnx-testdata) on the host fp32 executor: no test that
// imports may fail, the ops the importer maps must pass their plain tests, and docs/onnx.md's
// conformance table is what `tessera import --conformance-report` prints (UPDATE_GOLDEN=1
// rewrites it).
#include "onnx/conformance.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace tessera::onnx_import {
namespace {

const std::vector<NodeTestResult>& results() {
  static const std::vector<NodeTestResult> r = run_node_tests(kNodeTestDir);
  return r;
}

const NodeTestResult* find(const std::string& test) {
  for (const NodeTestResult& r : results())
    if (r.test == test) return &r;
  return nullptr;
}

class OnnxConformance : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::is_directory(kNodeTestDir))
      GTEST_SKIP() << kNodeTestDir << " is missing (Debian package libonnx-testdata)";
  }
};

TEST_F(OnnxConformance, NoImportedNodeTestFails) {
  for (const NodeTestResult& r : results())
    EXPECT_NE(r.status, NodeTestResult::Status::kFailed) << r.test << ": " << r.reason;
}

TEST_F(OnnxConformance, MappedOpsPassTheirPlainTests) {
  for (const char* test : {"test_relu",
                           "test_add",
                           "test_add_bcast",
                           "test_sub",
                           "test_mul",
                           "test_neg",
                           "test_matmul_2d",
                           "test_matmul_3d",
                           "test_gemm_default_no_bias",
                           "test_gemm_transposeB",
                           "test_basic_conv_with_padding",
                           "test_conv_with_strides_padding",
                           "test_maxpool_2d_default",
                           "test_batchnorm_example",
                           "test_softmax_axis_1",
                           "test_reshape_reduced_dims",
                           "test_flatten_axis1",
                           "test_transpose_default",
                           "test_squeeze",
                           "test_unsqueeze_axis_0",
                           "test_shape",
                           "test_identity",
                           "test_dropout_default",
                           "test_constant"}) {
    const NodeTestResult* r = find(test);
    ASSERT_NE(r, nullptr) << test << " is not among the node tests";
    EXPECT_EQ(r->status, NodeTestResult::Status::kPassed) << test << ": " << r->reason;
  }
}

TEST_F(OnnxConformance, DocsTableIsTheReport) {
  const std::string path = std::string(TESSERA_SOURCE_DIR) + "/docs/onnx.md";
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  std::string doc = s.str();
  const std::string begin = "<!-- conformance: begin -->\n", end = "<!-- conformance: end -->";
  const size_t b = doc.find(begin), e = doc.find(end);
  ASSERT_TRUE(b != std::string::npos && e != std::string::npos && b < e) << path;
  const std::string table = conformance_markdown(results());
  if (std::getenv("UPDATE_GOLDEN") != nullptr) {
    doc.replace(b + begin.size(), e - b - begin.size(), table);
    std::ofstream(path, std::ios::trunc) << doc;
    return;
  }
  EXPECT_EQ(doc.substr(b + begin.size(), e - b - begin.size()), table)
      << "regenerate with UPDATE_GOLDEN=1 (or tessera import --conformance-report)";
}

}  // namespace
}  // namespace tessera::onnx_import
