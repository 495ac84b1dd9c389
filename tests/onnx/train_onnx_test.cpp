// `train --model x.onnx` (onnx/onnx_training.h): the checked-in Fashion-MNIST MLP
// (data/onnx/fashion_mlp.onnx, made by the builder below; UPDATE_GOLDEN=1 rewrites it) trains on
// the simulated chip bit-identically to the host executor in chip numerics, from the file's
// initializers; bad loss heads, label inputs and datasets are errors naming the problem.
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <gtest/gtest.h>

#include "common/splitmix64.h"
#include "core/spec.h"
#include "graph/host_trainer.h"
#include "model_builder.h"
#include "onnx/onnx_training.h"
#include "runtime/chip_test_data.h"
#include "runtime/dataset.h"
#include "runtime/train_chip.h"
#include "support/error_of.h"
#include "support/temp_dir.h"

namespace tessera::onnx_import {
namespace {

const std::string kFashionMlp = std::string(TESSERA_SOURCE_DIR) + "/data/onnx/fashion_mlp.onnx";
const std::string kMlp = std::string(TESSERA_SOURCE_DIR) + "/data/onnx/mlp.onnx";

std::vector<float> uniform(int64_t n, double lo, double hi, SplitMix64& rng) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>(lo + (hi - lo) * rng.unit());
  return v;
}

// x [N, 784] -> Gemm(784 -> 32, transB) -> Sigmoid -> Gemm(32 -> 10) -> y [N, 10], opset 13;
// weights uniform in +-1/sqrt(fan-in).
std::string fashion_mlp_bytes() {
  SplitMix64 rng(784);
  const double b1 = 1 / 28.0, b2 = 1 / std::sqrt(32.0);
  testing::OnnxBuilder b;
  b.input("x", {-1, 784});
  b.init("w1", {32, 784}, uniform(32 * 784, -b1, b1, rng))
      .init("b1", {32}, uniform(32, -b1, b1, rng));
  b.init("w2", {32, 10}, uniform(320, -b2, b2, rng)).init("b2", {10}, uniform(10, -b2, b2, rng));
  testing::OnnxBuilder::attr(b.node("Gemm", {"x", "w1", "b1"}, {"h"}, "dense1"), "transB", 1);
  b.node("Sigmoid", {"h"}, {"s"}, "sigmoid1");
  b.node("Gemm", {"s", "w2", "b2"}, {"y"}, "dense2");
  b.output("y");
  return b.bytes();
}

TEST(OnnxTrain, CheckedInFashionMlpIsTheBuilderOutput) {
  if (std::getenv("UPDATE_GOLDEN") != nullptr)
    testing::write_bytes(kFashionMlp, fashion_mlp_bytes());
  EXPECT_EQ(testing::read_bytes(kFashionMlp), fashion_mlp_bytes())
      << "regenerate with UPDATE_GOLDEN=1";
}

void expect_bit_identical(const std::vector<std::vector<float>>& a,
                          const std::vector<std::vector<float>>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].size(), b[i].size()) << what << " " << i;
    EXPECT_EQ(std::memcmp(a[i].data(), b[i].data(), 4 * a[i].size()), 0) << what << " " << i;
  }
}

void check_exact(graph::OptimizerKind kind, double lr) {
  const runtime::TrainModel model = onnx_train_model(kFashionMlp, "y", "labels");
  EXPECT_EQ(model.spec.input, graph::Shape{784});
  graph::OptimizerConfig opt;
  opt.kind = kind;
  opt.lr = lr;
  runtime::ChipTrainerOptions o;
  o.batch = 8;
  o.optimizer = opt;
  const core::CoreSpec spec = runtime::chip_test::tpu_v2_like();
  runtime::ChipTrainer chip(model, spec, o);
  graph::HostTrainer host(model.build, model.initial, 8, graph::Numerics::kChip, opt);
  expect_bit_identical(chip.params(), model.initial, "initial parameters");
  SplitMix64 rng(3);
  for (int s = 0; s < 4; ++s) {
    const int n = s == 3 ? 5 : 8;  // and a partial batch
    const std::vector<float> x = uniform(n * 784, 0, 1, rng);
    std::vector<int32_t> labels(static_cast<size_t>(n));
    for (int32_t& l : labels) l = static_cast<int32_t>(rng.next() % 10);
    const float lc = chip.step(x.data(), labels.data(), n);
    const float lh = host.step(x.data(), labels.data(), n);
    ASSERT_EQ(std::memcmp(&lc, &lh, 4), 0) << "step " << s << ": chip " << lc << " host " << lh;
  }
  expect_bit_identical(chip.params(), host.params(), "parameters");
  expect_bit_identical(chip.optimizer_state(), host.optimizer().state(), "optimizer state");
}

TEST(OnnxTrain, FashionMlpStepsAreBitIdenticalToTheChipNumericsReference) {
  check_exact(graph::OptimizerKind::kSgd, 0.1);
  check_exact(graph::OptimizerKind::kAdam, 1e-3);
}

TEST(OnnxTrain, PyTorchCnnImportsToTheZooCnnsOpsWithoutPermutes) {
  // The one-channel input's NHWC permute is a reshape; Flatten's NCHW permute is folded into the
  // dense layer's weight rows (src/onnx/permuted_rows.h).
  const runtime::TrainModel t =
      onnx_train_model(std::string(TESSERA_SOURCE_DIR) + "/data/onnx/cnn.onnx", "y", "labels");
  EXPECT_EQ(t.spec.input, (graph::Shape{28, 28, 1}));
  const graph::Model m = t.build(8);
  std::vector<std::string> ops;
  for (const graph::Node& n : m.graph.nodes()) ops.emplace_back(graph::op_name(n.op));
  EXPECT_EQ(ops, (std::vector<std::string>{"reshape", "conv2d", "add", "relu", "maxpool2d",
                                           "conv2d", "add", "relu", "maxpool2d", "reshape",
                                           "matmul", "add", "softmax_cross_entropy"}));
}

TEST(OnnxTrainBad, LossHeadAndLabelInputAreChecked) {
  EXPECT_EQ(testing::error_of([] { loss_output_from_flag("mse:y"); }),
            "--loss: 'mse:y': the loss head is softmax-ce:OUTPUT_NAME");
  EXPECT_EQ(testing::error_of([] { onnx_train_model(kMlp, "logits", "labels"); }),
            kMlp + ": --loss names output 'logits', which the model does not have (outputs: 'y')");
  EXPECT_EQ(testing::error_of([] { onnx_train_model(kMlp, "y", "x"); }),
            kMlp + ": no float input with a batch dim to train on");
}

TEST(OnnxTrainBad, DatasetOfTheWrongSampleSizeSaysWhy) {
  runtime::Dataset d;
  d.name = "fashion-mnist";
  d.rows = d.cols = 28;
  d.classes = 10;
  EXPECT_EQ(testing::error_of(
                [&] { runtime::check_fits_model(d, onnx_train_model(kMlp, "y", "labels")); }),
            "dataset 'fashion-mnist': images are 28x28 (784 values per sample), but model 'mlp' "
            "takes input [64]");
}

}  // namespace
}  // namespace tessera::onnx_import
