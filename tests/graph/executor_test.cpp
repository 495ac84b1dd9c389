#include "graph/executor.h"

#include <bit>
#include <cmath>

#include <gtest/gtest.h>

#include "common/error.h"
#include "common/splitmix64.h"
#include "graph/autodiff.h"
#include "graph/model.h"
#include "numerics/bf16.h"
#include "numerics/column_sum.h"
#include "numerics/eup.h"
#include "numerics/matmul.h"
#include "numerics/reduce.h"
#include "support/error_of.h"

namespace tessera::graph {
namespace {

std::vector<float> random_floats(int64_t n, uint64_t seed, float scale = 1.0f) {
  SplitMix64 rng(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>((2.0 * rng.unit() - 1.0) * scale);
  return v;
}

void expect_bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(a[i]), std::bit_cast<uint32_t>(b[i])) << "element " << i;
}

using testing::error_of;

struct MatmulGraph {
  Graph g;
  int a, b, c;
  MatmulGraph(int M, int K, int N) {
    a = g.add_input("a", {M, K});
    b = g.add_param("b", {K, N});
    c = g.add_node(OpKind::kMatMul, {a, b});
  }
};

TEST(ChipNumerics, MatMulIsTheMxuContractOnBf16RoundedOperands) {
  const int M = 9, K = 37, N = 21;
  MatmulGraph mg(M, K, N);
  const std::vector<float> a = random_floats(M * K, 1), b = random_floats(K * N, 2);
  Executor<float> ex(mg.g, Numerics::kChip);
  ex.set(mg.a, a);
  ex.set(mg.b, b);
  ex.run();
  std::vector<float> ar = a, br = b, want(M * N, 0.0f);
  numerics::round_to_bf16(ar.data(), static_cast<long>(ar.size()));
  numerics::round_to_bf16(br.data(), static_cast<long>(br.size()));
  numerics::mxu_matmul_accumulate_reference(ar.data(), K, br.data(), N, want.data(), N, M, K, N);
  expect_bitwise_equal(ex.get(mg.c), want);
}

TEST(HostNumerics, Fp32BlasMatchesTheNaiveLoopAndFp64) {
  const int M = 33, K = 70, N = 17;
  MatmulGraph mg(M, K, N);
  const std::vector<float> a = random_floats(M * K, 3), b = random_floats(K * N, 4);
  Executor<float> blas(mg.g, Numerics::kF32, true), naive(mg.g, Numerics::kF32, false);
  Executor<double> f64(mg.g, Numerics::kF64);
  for (auto* ex : {&blas, &naive}) {
    ex->set(mg.a, a);
    ex->set(mg.b, b);
    ex->run();
  }
  f64.set(mg.a, std::vector<double>(a.begin(), a.end()));
  f64.set(mg.b, std::vector<double>(b.begin(), b.end()));
  f64.run();
  for (int i = 0; i < M * N; ++i) {
    EXPECT_NEAR(blas.get(mg.c)[i], f64.get(mg.c)[i], 1e-5);
    EXPECT_NEAR(naive.get(mg.c)[i], f64.get(mg.c)[i], 1e-5);
  }
}

TEST(ChipNumerics, BiasGradientIsTheNumericsColumnSum) {
  Graph g;
  const int x = g.add_input("x", {37, 19});
  const int r = g.add_node(OpKind::kReduceRows, {x});
  const std::vector<float> v = random_floats(37 * 19, 5, 100.0f);
  Executor<float> ex(g, Numerics::kChip);
  ex.set(x, v);
  ex.run();
  std::vector<float> want(19);
  numerics::column_sum(v.data(), 37, 19, 19, want.data(), 8);
  expect_bitwise_equal(ex.get(r), want);
}

TEST(ChipNumerics, ColumnSumFollowsSublanePartialsThenTree) {
  std::vector<float> x(20);
  for (int i = 0; i < 20; ++i)
    x[i] = std::ldexp(1.0f, i % 5 == 0 ? 24 : 0) * (i % 3 == 0 ? -1.0f : 1.0f);
  float partial[8] = {};
  for (int r = 0; r < 20; ++r) partial[r % 8] = partial[r % 8] + x[r];
  float got = 0;
  numerics::column_sum(x.data(), 20, 1, 1, &got, 8);
  EXPECT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(numerics::tree_sum(partial, 8)));
}

TEST(ChipNumerics, SoftmaxCrossEntropyUsesTreeReductionsAndEup) {
  Graph g;
  const int x = g.add_input("x", {3, 10});
  const int y = g.add_input("y", {3}, DType::kI32);
  const int loss = g.add_node(OpKind::kSoftmaxCrossEntropy, {x, y});
  const int seed = g.add_node(OpKind::kOnesLike, {loss});
  const int grad = g.add_node(OpKind::kSoftmaxCrossEntropyGrad, {x, y, seed});
  const std::vector<float> v = random_floats(30, 6, 4.0f);
  const std::vector<int32_t> labels{2, 9, 0};
  Executor<float> ex(g, Numerics::kChip);
  ex.set(x, v);
  ex.set_labels(y, labels);
  ex.run();
  float per[3];
  std::vector<float> want_grad(30);
  const float inv_b = 1.0f / 3.0f;
  for (int b = 0; b < 3; ++b) {
    const float* row = v.data() + b * 10;
    const float m = numerics::tree_max(row, 10);
    float e[10];
    for (int c = 0; c < 10; ++c) e[c] = numerics::eup_exp(row[c] - m);
    const float s = numerics::tree_sum(e, 10);
    per[b] = numerics::eup_log(s) - (row[labels[b]] - m);
    const float r = numerics::eup_rcp(s);
    for (int c = 0; c < 10; ++c)
      want_grad[b * 10 + c] = (e[c] * r - (c == labels[b] ? 1.0f : 0.0f)) * inv_b;
  }
  float total;
  numerics::column_sum(per, 3, 1, 1, &total, 8);
  expect_bitwise_equal(ex.get(loss), {total * inv_b});
  expect_bitwise_equal(ex.get(grad), want_grad);
}

// conv2d in chip numerics is one MXU matmul of the im2col matrix (K = (kh, kw, ci) ascending).
TEST(ChipNumerics, Conv2DIsTheMxuContractOnTheIm2colMatrix) {
  Graph g;
  const int x = g.add_input("x", {2, 5, 6, 3});
  const int w = g.add_param("w", {3, 3, 3, 4});
  const int y = g.add_node(OpKind::kConv2D, {x, w}, Attrs::conv(2, 1));
  const std::vector<float> xv = random_floats(2 * 5 * 6 * 3, 11),
                           wv = random_floats(3 * 3 * 3 * 4, 12);
  Executor<float> ex(g, Numerics::kChip);
  ex.set(x, xv);
  ex.set(w, wv);
  ex.run();
  const int OH = 3, OW = 3, K = 27;
  std::vector<float> cols(2 * OH * OW * K, 0.0f);
  for (int n = 0; n < 2; ++n)
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OW; ++ow)
        for (int kh = 0; kh < 3; ++kh)
          for (int kw = 0; kw < 3; ++kw)
            for (int c = 0; c < 3; ++c) {
              const int h = oh * 2 - 1 + kh, ww = ow * 2 - 1 + kw;
              if (h < 0 || h >= 5 || ww < 0 || ww >= 6) continue;
              cols[((n * OH + oh) * OW + ow) * K + (kh * 3 + kw) * 3 + c] =
                  xv[((n * 5 + h) * 6 + ww) * 3 + c];
            }
  std::vector<float> wr = wv, want(2 * OH * OW * 4, 0.0f);
  numerics::round_to_bf16(cols.data(), static_cast<long>(cols.size()));
  numerics::round_to_bf16(wr.data(), static_cast<long>(wr.size()));
  numerics::mxu_matmul_accumulate_reference(cols.data(), K, wr.data(), 4, want.data(), 4,
                                            2 * OH * OW, K, 4);
  expect_bitwise_equal(ex.get(y), want);
}

TEST(HostNumerics, UniformLogitsGiveLossLogC) {
  Graph g;
  const int x = g.add_input("x", {4, 10});
  const int y = g.add_input("y", {4}, DType::kI32);
  const int loss = g.add_node(OpKind::kSoftmaxCrossEntropy, {x, y});
  Executor<double> ex(g, Numerics::kF64);
  ex.set(x, std::vector<double>(40, 0.25));
  ex.set_labels(y, {0, 1, 2, 9});
  ex.run();
  EXPECT_NEAR(ex.get(loss)[0], std::log(10.0), 1e-15);
  const TensorD t = ex.tensor(loss);
  EXPECT_EQ(t.shape, Shape{});
  EXPECT_EQ(t.size(), 1);
}

TEST(ChipNumerics, ChipTrainingStepIsCloseToFp32AndDeterministic) {
  const Model m = build_model(zoo_spec("cnn_small"), 4);
  const TrainingGraph t = build_training_graph(m.graph, m.loss);
  const auto params = init_params(m, 1);
  const std::vector<float> images = random_floats(4 * 784, 9, 0.5f);
  auto run = [&](Numerics mode) {
    auto ex = std::make_unique<Executor<float>>(t.graph, mode);
    for (size_t i = 0; i < params.size(); ++i) ex->set(t.params[i], params[i]);
    std::vector<float> pixels = images;
    for (float& p : pixels) p = p + 0.5f;
    ex->set(m.input, pixels);
    ex->set_labels(m.labels, {3, 1, 4, 1});
    ex->run();
    return ex;
  };
  auto chip1 = run(Numerics::kChip), chip2 = run(Numerics::kChip), f32 = run(Numerics::kF32);
  for (int g : t.grads) expect_bitwise_equal(chip1->get(g), chip2->get(g));
  EXPECT_NEAR(chip1->get(m.loss)[0], f32->get(m.loss)[0], 2e-3);
  for (size_t i = 0; i < t.grads.size(); ++i) {
    const auto& a = chip1->get(t.grads[i]);
    const auto& b = f32->get(t.grads[i]);
    double diff = 0, norm = 0;
    for (size_t k = 0; k < a.size(); ++k) {
      diff += (a[k] - b[k]) * (a[k] - b[k]);
      norm += b[k] * b[k];
    }
    // bf16 operands (~0.4% per element) plus ReLU/max-pool decisions that flip on near-ties:
    // a few percent on the conv gradients of random images.
    EXPECT_LT(std::sqrt(diff), 0.1 * std::sqrt(norm) + 1e-6) << m.graph.value(t.params[i]).name;
    EXPECT_GT(diff, 0.0) << "chip numerics should differ from fp32 (bf16 operands)";
  }
}

// The fp32 paths (BLAS with transposed operands, naive loops) compute the same training step
// as fp64 up to fp32 rounding.
TEST(HostNumerics, Fp32TrainingStepMatchesFp64) {
  const Model m = build_model(zoo_spec("cnn_small"), 3);
  const TrainingGraph t = build_training_graph(m.graph, m.loss);
  const auto params = init_params(m, 2);
  std::vector<float> pixels = random_floats(3 * 784, 13, 0.5f);
  for (float& p : pixels) p = p + 0.5f;
  Executor<double> f64(t.graph, Numerics::kF64);
  for (size_t i = 0; i < params.size(); ++i)
    f64.set(t.params[i], std::vector<double>(params[i].begin(), params[i].end()));
  f64.set(m.input, std::vector<double>(pixels.begin(), pixels.end()));
  f64.set_labels(m.labels, {7, 0, 2});
  f64.run();
  for (bool blas : {true, false}) {
    Executor<float> f32(t.graph, Numerics::kF32, blas);
    for (size_t i = 0; i < params.size(); ++i) f32.set(t.params[i], params[i]);
    f32.set(m.input, pixels);
    f32.set_labels(m.labels, {7, 0, 2});
    f32.run();
    for (size_t i = 0; i < t.grads.size(); ++i) {
      const auto& a = f32.get(t.grads[i]);
      const auto& b = f64.get(t.grads[i]);
      double scale = 0;
      for (double x : b) scale = std::max(scale, std::abs(x));
      for (size_t k = 0; k < a.size(); ++k)
        ASSERT_NEAR(a[k], b[k], 1e-4 * scale)
            << m.graph.value(t.params[i]).name << " blas " << blas;
    }
  }
}

TEST(Executor_bad, UnboundValuesWrongSizesAndBadLabelsAreErrors) {
  Graph g;
  const int x = g.add_input("x", {2, 3});
  const int y = g.add_input("labels", {2}, DType::kI32);
  g.add_node(OpKind::kSoftmaxCrossEntropy, {x, y});
  Executor<float> ex(g, Numerics::kF32);
  EXPECT_EQ(error_of([&] { ex.run(); }), "value 'x': is not bound");
  EXPECT_EQ(error_of([&] {
              ex.set(x, {1, 2});
            }),
            "value 'x': bound 2 elements, shape [2, 3] needs 6");
  EXPECT_EQ(error_of([&] {
              ex.set(y, {1, 2});
            }),
            "value 'labels': only f32 inputs and parameters can be bound with set()");
  ex.set(x, {0, 0, 0, 0, 0, 0});
  ex.set_labels(y, {1, 3});
  EXPECT_EQ(error_of([&] { ex.run(); }),
            "softmax_cross_entropy: label 3 of sample 1 is outside [0, 3)");
}

}  // namespace
}  // namespace tessera::graph
