// An imported model on the simulated tensor core: the checked-in MLP (data/onnx/mlp.onnx, made by
// the builder below; UPDATE_GOLDEN=1 rewrites it) runs one forward pass whose output is within a
// bf16 tolerance of the host fp32 executor's (data/onnx/mlp_x.pb: the docs' example input).
#include <cmath>
#include <cstdlib>

#include <gtest/gtest.h>

#include "common/splitmix64.h"
#include "model_builder.h"
#include "onnx/chip_model.h"
#include "onnx/host_run.h"
#include "support/error_of.h"
#include "support/temp_dir.h"

namespace tessera::onnx_import {
namespace {

const std::string kMlp = std::string(TESSERA_SOURCE_DIR) + "/data/onnx/mlp.onnx";
const std::string kMlpInput = std::string(TESSERA_SOURCE_DIR) + "/data/onnx/mlp_x.pb";

std::vector<float> uniform(int64_t n, double bound, SplitMix64& rng) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>((2 * rng.unit() - 1) * bound);
  return v;
}

// x [8, 64] -> Gemm(64 -> 32, transB) -> Relu -> Gemm(32 -> 10) -> y [8, 10], opset 13.
std::string mlp_bytes() {
  SplitMix64 rng(22);
  testing::OnnxBuilder b;
  b.input("x", {-1, 64});
  b.init("w1", {32, 64}, uniform(32 * 64, 0.125, rng)).init("b1", {32}, uniform(32, 0.125, rng));
  b.init("w2", {32, 10}, uniform(320, 0.18, rng)).init("b2", {10}, uniform(10, 0.18, rng));
  testing::OnnxBuilder::attr(b.node("Gemm", {"x", "w1", "b1"}, {"h"}, "dense1"), "transB", 1);
  b.node("Relu", {"h"}, {"r"}, "relu1");
  b.node("Gemm", {"r", "w2", "b2"}, {"y"}, "dense2");
  b.output("y");
  return b.bytes();
}

// An input batch for the docs' example: x [8, 64] uniform in [-1, 1].
std::string mlp_input_bytes() {
  SplitMix64 rng(5);
  return to_proto("x", {8, 64}, uniform(8 * 64, 1.0, rng)).SerializeAsString();
}

TEST(OnnxChip, CheckedInMlpIsTheBuilderOutput) {
  if (std::getenv("UPDATE_GOLDEN") != nullptr) {
    testing::write_bytes(kMlp, mlp_bytes());
    testing::write_bytes(kMlpInput, mlp_input_bytes());
  }
  EXPECT_EQ(testing::read_bytes(kMlp), mlp_bytes()) << "regenerate with UPDATE_GOLDEN=1";
  EXPECT_EQ(testing::read_bytes(kMlpInput), mlp_input_bytes()) << "regenerate with UPDATE_GOLDEN=1";
}

TEST(OnnxChip, MlpForwardPassIsWithinBf16OfTheHost) {
  ImportOptions o;
  o.input_shapes["x"] = {8, 64};
  const ImportedModel m = import_model(load_model_file(kMlp), o);
  SplitMix64 rng(5);
  const std::vector<float> x = uniform(8 * 64, 1.0, rng);
  Tensor xt{{8, 64}, false, std::vector<double>(x.begin(), x.end()), {}};
  const Tensor host = run_on_host(m, {xt})[0];
  const ChipRun chip = run_on_chip(m, core::CoreSpec{}, xt);
  ASSERT_EQ(chip.output.size(), host.f.size());
  double scale = 0;
  for (double v : host.f) scale = std::max(scale, std::fabs(v));
  // bf16 operands (8 significant bits) through two layers: a few units of 2^-8 of the output scale.
  for (size_t k = 0; k < host.f.size(); ++k)
    EXPECT_NEAR(chip.output[k], host.f[k], 0.02 * scale) << "element " << k;
  EXPECT_GT(chip.cycles, 0);
  ASSERT_EQ(chip.layers.size(), 2u);
  // The MXU's MACs count whole (padded) tiles: at least the layer's own.
  EXPECT_GE(chip.layers[0].macs, 8 * 64 * 32);
  EXPECT_GE(chip.layers[1].macs, 8 * 32 * 10);
  EXPECT_GT(chip.layers[0].cycles, 0);
  EXPECT_GT(chip.layers[1].cycles, 0);
}

TEST(OnnxChip, ModelWithoutInitializersRuns) {  // no parameters: nothing for the optimizer to plan
  testing::OnnxBuilder b;
  b.input("x", {2, 3}).node("Relu", {"x"}, {"y"});
  b.output("y");
  const ImportedModel m = import_model(parse_model(b.bytes(), "m.onnx", "."));
  const ChipRun r =
      run_on_chip(m, core::CoreSpec{}, Tensor{{2, 3}, false, {-1, 2, -3, 4, 0, 6}, {}});
  EXPECT_EQ(r.output, (std::vector<float>{0, 2, 0, 4, 0, 6}));
}

TEST(OnnxChipBad, ModelWithTwoInputsSaysWhy) {
  testing::OnnxBuilder b;
  b.input("a", {2, 2}).input("c", {2, 2}).node("Add", {"a", "c"}, {"y"});
  b.output("y");
  const ImportedModel m = import_model(parse_model(b.bytes(), "m.onnx", "."));
  EXPECT_EQ(testing::error_of([&] { inference_model(m); }),
            "onnx inference: the tensor core runs models with one input; this one has 2 input(s)");
}

}  // namespace
}  // namespace tessera::onnx_import
