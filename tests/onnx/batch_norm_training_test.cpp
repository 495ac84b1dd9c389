// BatchNormalization in training mode (onnx/batch_norm_training.h) against one training step of
// PyTorch 1.13's BatchNorm2d (data/onnx/bn_training_*.pb, made by `scripts/export-models DIR
// --models bn_training`): the output y, the running averages (ONNX's update: the population
// variance) and, through autodiff, the gradients of sum(y * r) for x, scale and bias; the
// running statistics are constants, scale and bias parameters.
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "graph/autodiff.h"
#include "graph/executor.h"
#include "model_builder.h"
#include "onnx/importer.h"
#include "onnx/onnx_training.h"
#include "support/error_of.h"
#include "support/temp_dir.h"

namespace tessera::onnx_import {
namespace {

std::vector<float> pb(const std::string& name) {
  const std::string path =
      std::string(TESSERA_SOURCE_DIR) + "/data/onnx/bn_training_" + name + ".pb";
  return from_proto(read_tensor_file(path), path).floats();
}

// x, scale, bias, input_mean and input_var as initializers, so that x is a parameter too and
// autodiff gives its gradient.
ImportedModel bn_model() {
  testing::OnnxBuilder b(15);
  b.init("x", {2, 3, 2, 2}, pb("x"));
  for (const char* n : {"scale", "bias", "mean", "var"}) b.init(n, {3}, pb(n));
  testing::OnnxBuilder::attr(
      b.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y", "rm", "rv"}, "bn"),
      "training_mode", 1);
  b.output("y").output("rm").output("rv");
  return import_model(parse_model(b.bytes(), "bn.onnx", "."));
}

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want,
                     const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  float scale = 0;
  for (float w : want) scale = std::max(scale, std::fabs(w));
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 2e-6 * std::max(scale, 1.0f)) << what << " [" << i << "]";
}

TEST(OnnxBatchNormTraining, MatchesPyTorchForwardRunningAveragesAndGradients) {
  ImportedModel m = bn_model();
  graph::Graph& g = m.graph;
  ASSERT_EQ(g.params().size(), 3u);     // x, scale, bias; the running statistics are constants
  EXPECT_EQ(g.constants().size(), 3u);  // input_mean, input_var, epsilon
  const int y = m.outputs[0].value, rm = m.outputs[1].value, rv = m.outputs[2].value;
  const int r = g.add_input("r", g.value(y).shape);
  const std::vector<int> grads = graph::append_backward(g, y, r);
  graph::Executor<float> ex(g, graph::Numerics::kF32);
  const std::vector<int> params = g.params();
  for (size_t k = 0; k < params.size(); ++k) ex.set(params[k], m.params[k]);
  ex.set(r, pb("r"));
  ex.run();
  expect_near_all(ex.get(y), pb("y"), "y");
  expect_near_all(ex.get(rm), pb("running_mean"), "running_mean");
  expect_near_all(ex.get(rv), pb("running_var"), "running_var");
  expect_near_all(ex.get(grads[0]), pb("dx"), "dx");
  expect_near_all(ex.get(grads[1]), pb("dscale"), "dscale");
  expect_near_all(ex.get(grads[2]), pb("dbias"), "dbias");
}

TEST(OnnxBatchNormTraining, TrainRefusesAModelWithBatchNormalization) {
  // The running averages are not kept across steps: train says so rather than folding them.
  const testing::TempDir dir;
  testing::OnnxBuilder b(15);
  b.input("x", {-1, 3, 2, 2});
  for (const char* n : {"scale", "bias", "mean", "var"}) b.init(n, {3}, pb(n));
  b.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"}, "bn");
  b.output("y");
  const std::string path = dir.file("bn.onnx");
  testing::write_bytes(path, b.bytes());
  EXPECT_EQ(testing::error_of([&] { onnx_train_model(path, "y", "labels"); }),
            path +
                ": BatchNormalization node 'bn': train does not keep the running averages of the "
                "batch statistics (import and infer run the model)");
}

}  // namespace
}  // namespace tessera::onnx_import
