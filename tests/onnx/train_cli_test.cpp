// `tessera train --model x.onnx --loss softmax-ce:OUTPUT` end to end through the built binary on
// Fashion-MNIST (skipped when the dataset or the binary is missing), and its bad input: a loss
// head the model does not have, a missing --loss, --loss on a zoo model, a model whose input does
// not fit the dataset's samples.
#include <filesystem>

#include <gtest/gtest.h>

#include "runtime/dataset.h"
#include "support/cli_run.h"

namespace tessera::onnx_import {
namespace {

const std::string kData = std::string(TESSERA_SOURCE_DIR) + "/data/onnx/";

class OnnxTrainCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::cli_binary_exists()) GTEST_SKIP() << "tessera is not built";
    if (!std::filesystem::is_directory(runtime::kFashionMnistDir))
      GTEST_SKIP() << runtime::kFashionMnistDir << " is missing";
  }
};

TEST_F(OnnxTrainCli, TrainsTheImportedMlpOnTheChip) {
  const testing::CliResult r = testing::run_cli("train --model " + kData +
                                                "fashion_mlp.onnx --loss softmax-ce:y --epochs 1 "
                                                "--steps 3 --batch 16");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("epoch 1: loss "), std::string::npos) << r.out;
}

TEST_F(OnnxTrainCli, BadLossHeadsAndDatasets_bad) {
  const std::string fashion = kData + "fashion_mlp.onnx", mlp = kData + "mlp.onnx";
  testing::CliResult r =
      testing::run_cli("train --model " + fashion + " --loss softmax-ce:logits", true);
  EXPECT_EQ(r.status, 1 << 8);
  EXPECT_EQ(r.out, "tessera: error: " + fashion +
                       ": --loss names output 'logits', which the model does not have (outputs: "
                       "'y')\n");
  r = testing::run_cli("train --model " + fashion, true);
  EXPECT_EQ(r.status, 2 << 8);
  EXPECT_EQ(r.out,
            "tessera: error: --loss: --model x.onnx needs the loss head: softmax-ce:OUTPUT_NAME\n");
  r = testing::run_cli("train --model mlp --loss softmax-ce:y", true);
  EXPECT_EQ(r.status, 2 << 8);
  EXPECT_EQ(r.out, "tessera: error: --loss: sets the loss head of --model x.onnx\n");
  r = testing::run_cli("train --model " + mlp + " --loss softmax-ce:y --steps 1", true);
  EXPECT_EQ(r.status, 1 << 8);
  // The file named is the dataset's images (compressed or not).
  EXPECT_EQ(
      r.out.rfind("tessera: error: " + std::string(runtime::kFashionMnistDir) + "/train-images", 0),
      0u)
      << r.out;
  EXPECT_NE(r.out.find(": images are 28x28 (784 values per sample), but model 'mlp' takes input "
                       "[64]\n"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace tessera::onnx_import
