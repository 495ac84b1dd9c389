// BatchNormalization in training mode (onnx/batch_norm_training.h) against one training step of
// PyTorch 1.13's BatchNorm2d (data/onnx/bn_training_*.pb, made by `scripts/export-models DIR
// --models bn_training`): the output y, the running averages (ONNX's update: the population
// variance) and, through autodiff, the gradients of sum(y * r) for x, scale and bias; the
// running statistics are constants, scale and bias parameters. Training an imported model keeps
// the running averages as state, checked against two PyTorch steps.
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "graph/autodiff.h"
#include "graph/executor.h"
#include "model_builder.h"
#include "onnx/importer.h"
#include "onnx/onnx_training.h"
#include "runtime/host_run.h"
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

// `train --model x.onnx` keeps the running averages as state: the training model updates them
// (PyTorch's convention), the evaluation model reads them (on the chip: batch_norm_chip_test.cpp).
TEST(OnnxBatchNormTraining, TrainKeepsTheRunningAveragesAsState) {
  const testing::TempDir dir;
  testing::OnnxBuilder b(15);
  b.input("x", {-1, 3, 2, 2});
  for (const char* n : {"scale", "bias", "mean", "var"}) b.init(n, {3}, pb(n));
  b.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"}, "bn");
  b.output("y");
  const std::string path = dir.file("bn.onnx");
  testing::write_bytes(path, b.bytes());
  const runtime::TrainModel t = onnx_train_model(path, "y", "labels");
  ASSERT_EQ(t.initial_state.size(), 2u);
  EXPECT_EQ(t.initial_state[0], pb("mean"));
  EXPECT_EQ(t.initial_state[1], pb("var"));
  EXPECT_EQ(t.initial.size(), 2u);  // scale and bias
  const graph::Model train = t.build(2), eval = t.build_eval(2);
  ASSERT_EQ(train.state.size(), 2u);
  EXPECT_EQ(train.graph.value(train.state[0].value).name, "mean");
  EXPECT_GE(train.state[0].update, 0);
  ASSERT_EQ(eval.state.size(), 2u);
  EXPECT_EQ(eval.state[1].update, -1);
}

std::vector<float> convnet_pb(const std::string& name) {
  const std::string path =
      std::string(TESSERA_SOURCE_DIR) + "/data/onnx/bn_convnet_" + name + ".pb";
  return from_proto(read_tensor_file(path), path).floats();
}

// data/onnx/bn_convnet.onnx (`scripts/export-models DIR --models bn_convnet`: conv - BatchNorm -
// ReLU - global average pool - Linear, exported in training mode) trained for two SGD steps on
// the host in fp32 and by PyTorch 1.13 on the same batch: the losses and the running averages
// after each step agree to fp32 rounding; evaluation reads the running averages and changes
// nothing.
TEST(OnnxBatchNormTraining, TwoStepsKeepPyTorchsRunningAverages) {
  const runtime::TrainModel t = onnx_train_model(
      std::string(TESSERA_SOURCE_DIR) + "/data/onnx/bn_convnet.onnx", "y", "labels");
  graph::OptimizerConfig opt;
  opt.kind = graph::OptimizerKind::kSgd;
  opt.lr = 0.1;
  opt.momentum = 0;
  graph::HostTrainer host =
      runtime::host_trainer(t, 4, graph::Numerics::kF32, opt, 0, /*use_blas=*/true);
  host.keep_state(t.initial_state, t.build_eval);
  const std::vector<float> x = convnet_pb("x"), want = convnet_pb("steps"),
                           loss = convnet_pb("loss");
  ASSERT_EQ(want.size(), 16u);
  const std::vector<int32_t> labels{0, 1, 2, 0};
  for (int s = 0; s < 2; ++s) {
    EXPECT_NEAR(host.step(x.data(), labels.data(), 4), loss[s], 1e-5) << "step " << s;
    for (int k = 0; k < 2; ++k)
      for (size_t c = 0; c < 4; ++c)
        EXPECT_NEAR(host.state()[k][c], want[(2 * s + k) * 4 + c], 1e-5)
            << "step " << s << (k == 0 ? " running mean " : " running var ") << c;
  }
  const std::vector<std::vector<float>> kept = host.state();
  graph::EvalResult acc;
  host.evaluate(x.data(), labels.data(), 4, acc);
  EXPECT_EQ(acc.samples, 4);
  EXPECT_EQ(host.state(), kept);
}

}  // namespace
}  // namespace tessera::onnx_import
