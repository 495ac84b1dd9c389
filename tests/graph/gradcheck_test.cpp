// Finite-difference checks in fp64 of every differentiable op's gradient rule (and, through
// them, of every backward-only op: relu_grad, softmax_cross_entropy_grad, conv2d_input_grad,
// conv2d_weight_grad, maxpool2d_grad, reduce_rows, ones_like), and of whole models.
#include <cmath>
#include <functional>
#include <set>

#include <gtest/gtest.h>

#include "common/splitmix64.h"
#include "graph/autodiff.h"
#include "graph/executor.h"
#include "graph/model.h"

namespace tessera::graph {
namespace {

// Values away from 0 (no ReLU kinks) and, with probability ~1, distinct (no max-pool ties).
std::vector<double> random_values(int64_t n, SplitMix64& rng) {
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) {
    const double u = 2.0 * rng.unit() - 1.0;
    x = u + (u >= 0 ? 0.05 : -0.05);
  }
  return v;
}

struct Check {
  Graph g;
  int output = -1;
  std::vector<int32_t> labels;  // for an i32 input, if any
};

// L(params) = sum(seed * output). Compares autodiff's gradient of every parameter with central
// differences on up to `samples` elements per parameter.
void expect_gradients_match(Check c, int samples = 24) {
  const int seed = c.g.add_input("seed", c.g.value(c.output).shape);
  const std::vector<int> grads = append_backward(c.g, c.output, seed);
  c.g.verify();
  Executor<double> ex(c.g, Numerics::kF64);
  SplitMix64 rng(7);
  for (const Value& v : c.g.values()) {
    if (v.kind == ValueKind::kNode) continue;
    if (v.dtype == DType::kI32)
      ex.set_labels(v.id, c.labels);
    else
      ex.set(v.id, random_values(num_elements(v.shape), rng));
  }
  ex.run();
  const std::vector<double> seed_v = ex.get(seed);
  auto loss = [&] {
    ex.run();
    const std::vector<double>& y = ex.get(c.output);
    double s = 0;
    for (size_t i = 0; i < y.size(); ++i) s += seed_v[i] * y[i];
    return s;
  };
  const std::vector<int> params = c.g.params();
  for (size_t p = 0; p < params.size(); ++p) {
    ASSERT_GE(grads[p], 0) << c.g.value(params[p]).name;
    ex.run();
    const std::vector<double> analytic = ex.get(grads[p]);
    std::vector<double>& theta = ex.at(params[p]);
    const int64_t n = static_cast<int64_t>(theta.size());
    for (int s = 0; s < std::min<int64_t>(samples, n); ++s) {
      const int64_t i =
          n <= samples ? s : static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
      const double keep = theta[i], h = 1e-6;
      theta[i] = keep + h;
      const double up = loss();
      theta[i] = keep - h;
      const double down = loss();
      theta[i] = keep;
      const double numeric = (up - down) / (2 * h);
      EXPECT_NEAR(analytic[i], numeric, 1e-6 * (1.0 + std::abs(numeric)))
          << c.g.value(params[p]).name << "[" << i << "]";
    }
  }
}

TEST(Gradcheck, MatMulBothOperands) {
  Check c;
  const int a = c.g.add_param("a", {3, 4}), b = c.g.add_param("b", {4, 5});
  c.output = c.g.add_node(OpKind::kMatMul, {a, b});
  expect_gradients_match(std::move(c));
}

TEST(Gradcheck, AddSameShapeAndBroadcastBias) {
  for (const Shape& bias : {Shape{2, 3, 5}, Shape{5}, Shape{3, 5}}) {
    Check c;
    const int a = c.g.add_param("a", {2, 3, 5}), b = c.g.add_param("b", bias);
    c.output = c.g.add_node(OpKind::kAdd, {a, b});
    expect_gradients_match(std::move(c));
  }
}

TEST(Gradcheck, Relu) {
  Check c;
  c.output = c.g.add_node(OpKind::kRelu, {c.g.add_param("x", {4, 6})});
  expect_gradients_match(std::move(c));
}

TEST(Gradcheck, SoftmaxCrossEntropyMeanOverBatch) {
  Check c;
  const int x = c.g.add_param("logits", {5, 4});
  const int y = c.g.add_input("labels", {5}, DType::kI32);
  c.labels = {0, 3, 1, 3, 2};
  c.output = c.g.add_node(OpKind::kSoftmaxCrossEntropy, {x, y});
  expect_gradients_match(std::move(c));
}

TEST(Gradcheck, Conv2DOverStridesAndPadding) {
  struct Case {
    Shape x, w;
    int stride, pad;
  };
  for (const Case& k :
       {Case{{2, 5, 5, 3}, {3, 3, 3, 4}, 1, 1}, Case{{1, 6, 7, 2}, {2, 3, 2, 3}, 2, 0},
        Case{{2, 7, 6, 1}, {3, 3, 1, 2}, 2, 1}, Case{{1, 5, 5, 2}, {5, 5, 2, 2}, 1, 2},
        Case{{1, 4, 4, 1}, {2, 2, 1, 1}, 3, 2}}) {
    Check c;
    const int x = c.g.add_param("x", k.x), w = c.g.add_param("w", k.w);
    c.output = c.g.add_node(OpKind::kConv2D, {x, w}, Attrs::conv(k.stride, k.pad));
    SCOPED_TRACE("x " + shape_str(k.x) + " w " + shape_str(k.w) + " stride " +
                 std::to_string(k.stride) + " pad " + std::to_string(k.pad));
    expect_gradients_match(std::move(c), 40);
  }
}

TEST(Gradcheck, MaxPool2DDisjointAndOverlappingWindows) {
  for (const auto& [kernel, stride] : {std::pair{2, 2}, std::pair{3, 2}, std::pair{2, 1}}) {
    Check c;
    const int x = c.g.add_param("x", {2, 6, 5, 3});
    c.output = c.g.add_node(OpKind::kMaxPool2D, {x}, Attrs::pool(kernel, stride));
    expect_gradients_match(std::move(c), 60);
  }
}

TEST(Gradcheck, ReshapeAndTranspose) {
  Check c;
  const int x = c.g.add_param("x", {2, 3, 4});
  const int r = c.g.add_node(OpKind::kReshape, {x}, Attrs::reshape({6, 4}));
  c.output = c.g.add_node(OpKind::kTranspose, {r});
  expect_gradients_match(std::move(c));
}

TEST(Gradcheck, ValueUsedTwiceAccumulatesBothGradients) {
  Check c;
  const int a = c.g.add_param("a", {3, 3});
  const int sq = c.g.add_node(OpKind::kMatMul, {a, a});
  c.output = c.g.add_node(OpKind::kAdd, {sq, a});
  expect_gradients_match(std::move(c));
}

// The composite loss of whole (small) models: every parameter of mlp-like and cnn-like graphs.
TEST(Gradcheck, ModelLossesAllParameters) {
  const ModelSpec mlp{
      "mlp_tiny", {12}, 4, {{LayerKind::kDense, 7}, {LayerKind::kRelu}, {LayerKind::kDense, 4}}};
  const ModelSpec cnn{"cnn_tiny",
                      {8, 8, 1},
                      3,
                      {{LayerKind::kConv2D, 3, 3, 1, 1},
                       {LayerKind::kRelu},
                       {LayerKind::kMaxPool2D, 0, 2, 2, 0},
                       {LayerKind::kConv2D, 4, 3, 1, 1},
                       {LayerKind::kRelu},
                       {LayerKind::kMaxPool2D, 0, 2, 2, 0},
                       {LayerKind::kFlatten},
                       {LayerKind::kDense, 3}}};
  for (const ModelSpec& spec : {mlp, cnn}) {
    Model m = build_model(spec, 3);
    Check c;
    c.g = m.graph;
    c.output = m.loss;
    c.labels = {0, 2, 1};
    expect_gradients_match(std::move(c), 30);
  }
}

// The cnn's training graph exercises every op in the table, so the checks above (which run the
// same rules on the same kernels) cover every op.
TEST(Gradcheck, CnnTrainingGraphUsesEveryOp) {
  const TrainingGraph t = build_training_graph(build_model(zoo_spec("cnn_small"), 2).graph,
                                               build_model(zoo_spec("cnn_small"), 2).loss);
  std::set<OpKind> used;
  for (const Node& n : t.graph.nodes()) used.insert(n.op);
  for (const OpInfo& info : kOpTable) EXPECT_TRUE(used.count(info.kind)) << info.mnemonic;
}

}  // namespace
}  // namespace tessera::graph
