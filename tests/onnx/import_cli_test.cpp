// `tessera import --input ...` end to end through the built binary: the checked-in small convnet
// (exported from PyTorch) on the host fp32 executor, its output written and compared with
// PyTorch's, and the message of an input name the model does not have.
#include <gtest/gtest.h>

#include "onnx/host_run.h"
#include "support/cli_run.h"
#include "support/temp_dir.h"

namespace tessera::onnx_import {
namespace {

const std::string kDir = std::string(TESSERA_SOURCE_DIR) + "/data/onnx/";

class OnnxImportCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::cli_binary_exists()) GTEST_SKIP() << "tessera is not built";
  }
};

TEST_F(OnnxImportCli, HostRunWritesAndComparesTheOutput) {
  testing::TempDir dir;
  const testing::CliResult r = testing::run_cli(
      "import " + kDir + "small_convnet.onnx --input x=" + kDir + "small_convnet_in_0.pb" +
      " --expect " + kDir + "small_convnet_out_0.pb --host-output " + dir.file("y.pb"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("output y [2, 5]: largest error "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("top-1 agrees on 2 / 2 rows"), std::string::npos) << r.out;
  const Tensor y = from_proto(read_tensor_file(dir.file("y.pb")), "y.pb");
  const Tensor e = from_proto(read_tensor_file(kDir + "small_convnet_out_0.pb"), "expected");
  EXPECT_LE(compare_output(y, e).relative_error(), 1e-5);
}

TEST_F(OnnxImportCli, HostRunWithAnInputTheModelDoesNotHave_bad) {
  const testing::CliResult r = testing::run_cli(
      "import " + kDir + "small_convnet.onnx --input z=" + kDir + "small_convnet_in_0.pb", true);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find(": 'z' (given with --input or --input-shape) is not a graph input; the "
                       "inputs: x\n"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace tessera::onnx_import
