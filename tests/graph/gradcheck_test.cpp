// Finite-difference checks in fp64 of every differentiable op's gradient rule (and, through
// them, of every backward-only op: relu_grad, softmax_cross_entropy_grad, conv2d_input_grad,
// conv2d_weight_grad, maxpool2d_grad, reduce_rows, ones_like, embedding_grad, embedding_bag_grad,
// layer_norm_grad, layer_norm_gain_grad, gelu_grad, softmax_grad, channel_squares, channel_dot,
// batch_norm_grad), and of whole models.
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "common/splitmix64.h"
#include "graph/autodiff.h"
#include "graph/batch_norm.h"
#include "graph/executor.h"
#include "graph/gpt_model.h"
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
  std::vector<int32_t> labels;                             // for an i32 input, if any
  std::map<std::string, std::vector<int32_t>> i32_inputs;  // others, by name (else `labels`)
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
    if (v.kind == ValueKind::kNode || v.kind == ValueKind::kConst)
      continue;  // constants: their values
    if (v.dtype == DType::kI32)
      ex.set_labels(v.id, c.i32_inputs.count(v.name) ? c.i32_inputs.at(v.name) : c.labels);
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

TEST(Gradcheck, EmbeddingScatterAddsRepeatedIds) {
  Check c;
  const int table = c.g.add_param("table", {5, 3});
  const int ids = c.g.add_input("ids", {2, 4}, DType::kI32);
  c.labels = {4, 0, 4, 2, 1, 4, 0, 3};
  c.output = c.g.add_node(OpKind::kEmbedding, {table, ids});
  expect_gradients_match(std::move(c));
}

// embedding_bag over repeated ids, an empty bag and ids past offsets[B] (unused).
Check embedding_bag_check(numerics::Combiner comb) {
  Check c;
  const int table = c.g.add_param("table", {6, 3});
  const int ids = c.g.add_input("ids", {9}, DType::kI32);
  const int offsets = c.g.add_input("offsets", {5}, DType::kI32);
  c.i32_inputs["ids"] = {4, 0, 4, 2, 1, 4, 5, 3, 3};
  c.i32_inputs["offsets"] = {0, 3, 3, 5, 7};
  c.output = c.g.add_node(OpKind::kEmbeddingBag, {ids, offsets, table}, Attrs::embedding_bag(comb));
  return c;
}

TEST(Gradcheck, EmbeddingBagScatterAddsEveryCombinersRowGradients) {
  for (const numerics::Combiner comb :
       {numerics::Combiner::Sum, numerics::Combiner::Mean, numerics::Combiner::None}) {
    SCOPED_TRACE(std::string(numerics::combiner_name(comb)));
    expect_gradients_match(embedding_bag_check(comb), 18);
  }
}

TEST(Gradcheck, LayerNormInputGainAndBias) {
  for (const Shape& x_shape : {Shape{6}, Shape{3, 5}, Shape{2, 3, 4}}) {
    Check c;
    const int64_t d = x_shape.back();
    const int x = c.g.add_param("x", x_shape);
    const int gain = c.g.add_param("gain", {d}), bias = c.g.add_param("bias", {d});
    c.output = c.g.add_node(OpKind::kLayerNorm, {x, gain, bias}, Attrs::layer_norm(1e-5));
    SCOPED_TRACE("x " + shape_str(x_shape));
    expect_gradients_match(std::move(c), 40);
  }
}

// Batch normalisation in training (graph/batch_norm.h): the batch_norm op's rule, which folds the
// batch statistics' gradients into x's through channel_dot and batch_norm_grad, against
// differences of the whole computation (statistics included), over rows of a 4-d NHWC x and of a
// matrix; its output multiplied by x so that the seed's sum over the rows is not all the loss.
Check batch_norm_check(const Shape& x_shape) {
  Check c;
  const int64_t channels = x_shape.back();
  const int x = c.g.add_param("x", x_shape);
  const int gamma = c.g.add_param("gamma", {channels}), beta = c.g.add_param("beta", {channels});
  const BatchStatistics b = batch_norm_training(c.g, x, gamma, beta, 1e-5, "bn");
  c.output = c.g.add_node(OpKind::kMul, {b.y, x});
  return c;
}

TEST(Gradcheck, BatchNormTrainingInputGammaAndBeta) {
  for (const Shape& x_shape : {Shape{2, 3, 3, 4}, Shape{7, 3}}) {
    SCOPED_TRACE("x " + shape_str(x_shape));
    expect_gradients_match(batch_norm_check(x_shape), 40);
  }
}

TEST(Gradcheck, Gelu) {
  Check c;
  c.output = c.g.add_node(OpKind::kGelu, {c.g.add_param("x", {4, 7})});
  expect_gradients_match(std::move(c));
}

TEST(Gradcheck, SoftmaxPlainAndCausal) {
  for (const auto& [shape, causal] :
       {std::pair{Shape{3, 5}, false}, std::pair{Shape{2, 4, 4}, true},
        std::pair{Shape{2, 2, 3, 5}, true}}) {
    Check c;
    c.output = c.g.add_node(OpKind::kSoftmax, {c.g.add_param("x", shape)}, Attrs::softmax(causal));
    SCOPED_TRACE("x " + shape_str(shape) + (causal ? " causal" : ""));
    expect_gradients_match(std::move(c), 40);
  }
}

TEST(Gradcheck, BatchMatMulEveryTransposeCombination) {
  for (const bool ta : {false, true})
    for (const bool tb : {false, true}) {
      Check c;
      const Shape a_shape = ta ? Shape{2, 3, 4, 5} : Shape{2, 3, 5, 4};  // M = 5, K = 4
      const Shape b_shape = tb ? Shape{2, 3, 6, 4} : Shape{2, 3, 4, 6};  // N = 6
      const int a = c.g.add_param("a", a_shape), b = c.g.add_param("b", b_shape);
      c.output = c.g.add_node(OpKind::kBatchMatMul, {a, b}, Attrs::batch_matmul(ta, tb));
      ASSERT_EQ(c.g.value(c.output).shape, (Shape{2, 3, 5, 6}));
      SCOPED_TRACE(std::string("transpose_a ") + (ta ? "1" : "0") + " transpose_b " +
                   (tb ? "1" : "0"));
      expect_gradients_match(std::move(c), 40);
    }
}

TEST(Gradcheck, HeadSplitAndMergePermutes) {
  Check c;
  const int x = c.g.add_param("x", {2, 3, 8});  // [B, T, D], 2 heads of 4
  const int split = c.g.add_node(OpKind::kReshape, {x}, Attrs::reshape({2, 3, 2, 4}));
  const int heads = c.g.add_node(OpKind::kPermute, {split}, Attrs::permute({0, 2, 1, 3}));
  const int w = c.g.add_param("w", {2, 2, 4, 4});
  const int mixed = c.g.add_node(OpKind::kBatchMatMul, {heads, w});
  const int back = c.g.add_node(OpKind::kPermute, {mixed}, Attrs::permute({0, 2, 1, 3}));
  c.output = c.g.add_node(OpKind::kReshape, {back}, Attrs::reshape({2, 3, 8}));
  expect_gradients_match(std::move(c), 40);
}

TEST(Gradcheck, MulSameShapeAndBroadcastAndScale) {
  for (const Shape& b_shape : {Shape{2, 3, 4}, Shape{4}, Shape{3, 4}}) {
    Check c;
    const int a = c.g.add_param("a", {2, 3, 4}), b = c.g.add_param("b", b_shape);
    const int m = c.g.add_node(OpKind::kMul, {a, b});
    c.output = c.g.add_node(OpKind::kScale, {m}, Attrs::scaled(-0.375));
    expect_gradients_match(std::move(c));
  }
}

TEST(Gradcheck, DropoutAppliesTheSameMaskBackward) {
  Check c;
  const int x = c.g.add_param("x", {6, 8});
  c.output = c.g.add_node(OpKind::kDropout, {x}, Attrs::dropout(0.3, 11));
  expect_gradients_match(std::move(c), 48);
}

TEST(Gradcheck, CrossEntropyOverManyRows) {
  Check c;
  const int x = c.g.add_param("logits", {2, 6, 4});
  const int flat = c.g.add_node(OpKind::kReshape, {x}, Attrs::reshape({12, 4}));
  const int y = c.g.add_input("labels", {12}, DType::kI32);
  c.labels = {0, 3, 1, 3, 2, 2, 0, 1, 3, 3, 0, 2};
  c.output = c.g.add_node(OpKind::kSoftmaxCrossEntropy, {flat, y});
  expect_gradients_match(std::move(c), 48);
}

// One pre-LayerNorm causal attention block with a GELU MLP and a byte-level loss: every
// transformer op (and the broadcasting add and reshape) on the path of every parameter.
Check attention_block_check() {
  constexpr int64_t B = 2, T = 3, D = 4, H = 2, V = 5;
  Check c;
  Graph& g = c.g;
  const int ids = g.add_input("ids", {B, T}, DType::kI32);
  const int tok = g.add_param("tok", {V, D}), pos = g.add_param("pos", {T, D});
  const int x = g.add_node(OpKind::kAdd, {g.add_node(OpKind::kEmbedding, {tok, ids}), pos});
  auto layer_norm = [&](int in, const std::string& name) {
    return g.add_node(OpKind::kLayerNorm,
                      {in, g.add_param(name + ".gain", {D}), g.add_param(name + ".bias", {D})},
                      Attrs::layer_norm(1e-5));
  };
  auto linear = [&](int in, int64_t n_in, int64_t n_out, const std::string& name) {
    const int rows = g.add_node(OpKind::kReshape, {in}, Attrs::reshape({B * T, n_in}));
    const int y = g.add_node(OpKind::kMatMul, {rows, g.add_param(name + ".w", {n_in, n_out})});
    return g.add_node(OpKind::kAdd, {y, g.add_param(name + ".b", {n_out})});
  };
  // Q, K and V as one Linear(D, 3D), split into three [B, H, T, D/H].
  const int qkv = g.add_node(OpKind::kReshape, {linear(layer_norm(x, "ln1"), D, 3 * D, "qkv")},
                             Attrs::reshape({B, T, 3, H, D / H}));
  const int heads = g.add_node(OpKind::kPermute, {qkv}, Attrs::permute({2, 0, 3, 1, 4}));
  const int q = g.add_node(OpKind::kSelect, {heads}, Attrs::select(0));
  const int k = g.add_node(OpKind::kSelect, {heads}, Attrs::select(1));
  const int v = g.add_node(OpKind::kSelect, {heads}, Attrs::select(2));
  const int scores = g.add_node(
      OpKind::kScale, {g.add_node(OpKind::kBatchMatMul, {q, k}, Attrs::batch_matmul(false, true))},
      Attrs::scaled(1 / std::sqrt(2.0)));
  const int att =
      g.add_node(OpKind::kDropout, {g.add_node(OpKind::kSoftmax, {scores}, Attrs::softmax(true))},
                 Attrs::dropout(0.25, 3));
  const int ctx = g.add_node(OpKind::kBatchMatMul, {att, v});
  const int merged = g.add_node(OpKind::kReshape,
                                {g.add_node(OpKind::kPermute, {ctx}, Attrs::permute({0, 2, 1, 3}))},
                                Attrs::reshape({B, T, D}));
  const int x2 = g.add_node(OpKind::kAdd, {x, merged});
  const int hidden = g.add_node(OpKind::kGelu, {linear(layer_norm(x2, "ln2"), D, 2 * D, "fc1")});
  const int gated = g.add_node(OpKind::kMul, {hidden, g.add_param("gate", {2 * D})});
  const int logits = linear(gated, 2 * D, V, "head");
  const int targets = g.add_input("targets", {B * T}, DType::kI32);
  c.output = g.add_node(OpKind::kSoftmaxCrossEntropy, {logits, targets});
  c.i32_inputs["ids"] = {1, 4, 0, 4, 2, 1};
  c.i32_inputs["targets"] = {4, 0, 2, 1, 3, 0};
  return c;
}

TEST(Gradcheck, AttentionBlockLossAllParameters) {
  expect_gradients_match(attention_block_check(), 30);
}

TEST(Gradcheck, GptLossAllParameters) {
  const Model m = build_gpt({.d_model = 4, .heads = 2, .layers = 2, .context = 3}, 2);
  Check c;
  c.g = m.graph;
  c.output = m.loss;
  c.i32_inputs["x"] = {72, 105, 33, 10, 37, 10};
  c.i32_inputs["labels"] = {105, 33, 10, 37, 10, 0};
  expect_gradients_match(std::move(c), 20);
}

TEST(Gradcheck, SelectOfEachIndex) {
  for (int index : {0, 1, 2}) {
    Check c;
    const int x = c.g.add_param("x", {3, 2, 4});
    c.output = c.g.add_node(OpKind::kSelect, {x}, Attrs::select(index));
    expect_gradients_match(std::move(c));
  }
}

// Every elementwise math op, broadcast, sum_to, slice, concat, pad and reduce_max in one graph:
// log, sqrt and reciprocal read sigmoid(x) (positive, away from 0); the sum over all of them is
// the output.
Check elementwise_check() {
  Check c;
  const int x = c.g.add_param("x", {3, 4});
  const int b = c.g.add_param("b", {4});
  const int s = c.g.add_node(OpKind::kSigmoid, {x});
  int total = c.g.add_node(OpKind::kBroadcast, {b}, Attrs::reshape({3, 4}));
  for (auto [op, in] : {std::pair{OpKind::kExp, x},
                        {OpKind::kLog, s},
                        {OpKind::kSqrt, s},
                        {OpKind::kReciprocal, s},
                        {OpKind::kTanh, x},
                        {OpKind::kErf, x}})
    total = c.g.add_node(OpKind::kAdd, {total, c.g.add_node(op, {in})});
  // A strided, reversed slice of x concatenated to a slice of the total along axis 1.
  const int back = c.g.add_node(OpKind::kSlice, {x}, Attrs::slice({3, 2}, {2, 3}, {-1, -2}));
  const int front = c.g.add_node(OpKind::kSlice, {total}, Attrs::slice({3, 2}, {0, 0}, {1, 1}));
  total = c.g.add_node(OpKind::kAdd,
                       {total, c.g.add_node(OpKind::kConcat, {back, front}, Attrs::concat(1))});
  // The column maxima of x padded with -1.5 (a column of the pad only among them).
  const int padded = c.g.add_node(OpKind::kPad, {x}, Attrs::padded({5, 6}, {1, 2}, -1.5));
  const int maxes = c.g.add_node(OpKind::kReduceMax, {padded}, Attrs::reshape({1, 6}));
  const int some = c.g.add_node(OpKind::kSlice, {maxes}, Attrs::slice({1, 4}, {0, 1}, {1, 1}));
  total = c.g.add_node(OpKind::kAdd,
                       {total, c.g.add_node(OpKind::kReshape, {some}, Attrs::reshape({4}))});
  const int column = c.g.add_node(OpKind::kSumTo, {total}, Attrs::reshape({1, 4}));
  c.output = c.g.add_node(OpKind::kMul,
                          {total, c.g.add_node(OpKind::kReshape, {column}, Attrs::reshape({4}))});
  return c;
}

TEST(Gradcheck, ElementwiseMathBroadcastSumToSliceConcatPadAndReduceMax) {
  expect_gradients_match(elementwise_check());
}

// The cnn's and the attention block's training graphs, with the elementwise and embedding-bag
// checks' and batch normalisation's, together exercise every op in the table, so the checks above
// (which run the same rules on the same kernels) cover every op.
TEST(Gradcheck, CnnAndAttentionTrainingGraphsUseEveryOp) {
  const TrainingGraph t = build_training_graph(build_model(zoo_spec("cnn_small"), 2).graph,
                                               build_model(zoo_spec("cnn_small"), 2).loss);
  Check block = attention_block_check();
  const TrainingGraph a = build_training_graph(block.g, block.output);
  std::set<OpKind> used;
  for (const Node& n : t.graph.nodes()) used.insert(n.op);
  for (const Node& n : a.graph.nodes()) used.insert(n.op);
  Check elementwise = elementwise_check();
  const TrainingGraph e = build_training_graph(
      elementwise.g,
      elementwise.g.add_node(OpKind::kSumTo, {elementwise.output}, Attrs::reshape({})));
  for (const Node& n : e.graph.nodes()) used.insert(n.op);
  Check bag = embedding_bag_check(numerics::Combiner::Mean);
  const TrainingGraph b =
      build_training_graph(bag.g, bag.g.add_node(OpKind::kSumTo, {bag.output}, Attrs::reshape({})));
  for (const Node& n : b.graph.nodes()) used.insert(n.op);
  Check bn = batch_norm_check({2, 3, 3, 4});
  const TrainingGraph norm =
      build_training_graph(bn.g, bn.g.add_node(OpKind::kSumTo, {bn.output}, Attrs::reshape({})));
  for (const Node& n : norm.graph.nodes()) used.insert(n.op);
  for (const OpInfo& info : kOpTable) EXPECT_TRUE(used.count(info.kind)) << info.mnemonic;
}

}  // namespace
}  // namespace tessera::graph
