// The transformer ops: shapes, shape errors, and the executor's three numerics modes (fp32 and
// chip close to fp64; masks, dropout and head split/merge exact).
#include <bit>
#include <cmath>

#include <gtest/gtest.h>

#include "common/splitmix64.h"
#include "graph/executor.h"
#include "numerics/philox.h"
#include "support/error_of.h"

namespace tessera::graph {
namespace {

using testing::error_of;

TEST(TransformerShapes, OpsGiveDocumentedShapes) {
  Graph g;
  const int table = g.add_param("table", {256, 8});
  const int ids = g.add_input("ids", {2, 5}, DType::kI32);
  const int x = g.add_node(OpKind::kEmbedding, {table, ids});
  EXPECT_EQ(g.value(x).shape, (Shape{2, 5, 8}));
  const int gain = g.add_param("gain", {8}), bias = g.add_param("bias", {8});
  EXPECT_EQ(g.value(g.add_node(OpKind::kLayerNorm, {x, gain, bias}, Attrs::layer_norm(1e-5))).shape,
            (Shape{2, 5, 8}));
  const int heads = g.add_node(OpKind::kPermute,
                               {g.add_node(OpKind::kReshape, {x}, Attrs::reshape({2, 5, 2, 4}))},
                               Attrs::permute({0, 2, 1, 3}));
  EXPECT_EQ(g.value(heads).shape, (Shape{2, 2, 5, 4}));
  const int scores =
      g.add_node(OpKind::kBatchMatMul, {heads, heads}, Attrs::batch_matmul(false, true));
  EXPECT_EQ(g.value(scores).shape, (Shape{2, 2, 5, 5}));
  EXPECT_EQ(g.value(g.add_node(OpKind::kSoftmax, {scores}, Attrs::softmax(true))).shape,
            (Shape{2, 2, 5, 5}));
  EXPECT_EQ(
      g.value(g.add_node(OpKind::kBatchMatMul, {heads, heads}, Attrs::batch_matmul(true, false)))
          .shape,
      (Shape{2, 2, 4, 4}));
  const int grad = g.add_node(OpKind::kEmbeddingGrad, {x, ids}, Attrs::reshape({256, 8}));
  EXPECT_EQ(g.value(grad).shape, (Shape{256, 8}));
  g.verify();
  EXPECT_NE(g.dump().find("= batch_matmul(%"), std::string::npos);
  EXPECT_NE(g.dump().find("softmax(%"), std::string::npos);
}

TEST(TransformerShapes_bad, ErrorsNameTheOpAndTheShapes) {
  Graph g;
  const int table = g.add_param("table", {16, 8});
  const int ids = g.add_input("ids", {2, 5}, DType::kI32);
  const int x = g.add_input("x", {2, 5, 8});
  const int d7 = g.add_param("d7", {7});
  const int a = g.add_input("a", {2, 3, 4}), b = g.add_input("b", {3, 3, 4});
  EXPECT_EQ(error_of([&] {
              g.add_node(OpKind::kEmbedding, {table, x});
            }),
            "embedding: ids must be i32, got f32");
  EXPECT_EQ(error_of([&] {
              g.add_node(OpKind::kEmbedding, {x, ids});
            }),
            "embedding: table must have rank 2, got [2, 5, 8]");
  EXPECT_EQ(error_of([&] {
              g.add_node(OpKind::kLayerNorm, {x, d7, d7}, Attrs::layer_norm(1e-5), "ln1");
            }),
            "layer_norm 'ln1': gain [7] is not [D] of x [2, 5, 8]");
  EXPECT_EQ(
      error_of([&] {
        g.add_node(OpKind::kLayerNorm, {x, g.add_param("g8", {8}), d7}, Attrs::layer_norm(1e-5));
      }),
      "layer_norm: bias [7] is not [D] of x [2, 5, 8]");
  EXPECT_EQ(error_of([&] {
              g.add_node(OpKind::kLayerNorm, {x, g.find_value("g8"), g.find_value("g8")},
                         Attrs::layer_norm(0));
            }),
            "layer_norm: eps must be > 0, got 0.000000");
  EXPECT_EQ(error_of([&] {
              g.add_node(OpKind::kBatchMatMul, {a, b});
            }),
            "batch_matmul: leading (batch) dimensions differ: a [2, 3, 4] and b [3, 3, 4]");
  EXPECT_EQ(error_of([&] {
              g.add_node(OpKind::kBatchMatMul, {a, a});
            }),
            "batch_matmul: inner dimensions differ: a [2, 3, 4] x b [2, 3, 4]");
  EXPECT_EQ(error_of([&] {
              g.add_node(OpKind::kBatchMatMul, {a, a}, Attrs::batch_matmul(true, true));
            }),
            "batch_matmul: inner dimensions differ: a [2, 3, 4]^T x b [2, 3, 4]^T");
  EXPECT_EQ(error_of([&] {
              g.add_node(OpKind::kBatchMatMul, {a, d7});
            }),
            "batch_matmul: a and b must have the same rank >= 2, got a [2, 3, 4] and b [7]");
  EXPECT_EQ(error_of([&] {
              g.add_node(OpKind::kPermute, {a}, Attrs::permute({0, 0, 1}));
            }),
            "permute: perm [0, 0, 1] is not a permutation of x [2, 3, 4]'s dims");
  EXPECT_EQ(error_of([&] {
              g.add_node(OpKind::kSoftmax, {g.add_input("s5t3", {2, 5, 3})}, Attrs::softmax(true));
            }),
            "softmax: a causal softmax takes x [..., S, T] with S <= T, got [2, 5, 3]");
  EXPECT_EQ(error_of([&] { g.add_node(OpKind::kSoftmax, {d7}, Attrs::softmax(true)); }),
            "softmax: a causal softmax takes x [..., S, T] with S <= T, got [7]");
  EXPECT_EQ(error_of([&] {
              g.add_node(OpKind::kMul, {a, d7});
            }),
            "mul: b [7] does not broadcast to a [2, 3, 4] (b's shape must be a suffix of a's)");
  EXPECT_EQ(error_of([&] { g.add_node(OpKind::kDropout, {a}, Attrs::dropout(1.0, 0)); }),
            "dropout: rate must be in [0, 1), got 1.000000");
  EXPECT_EQ(error_of([&] {
              g.add_node(OpKind::kEmbeddingGrad, {a, ids}, Attrs::reshape({16, 8}));
            }),
            "embedding_grad: dy [2, 3, 4] is not embedding(table [16, 8], ids [2, 5])'s shape "
            "[2, 5, 8]");
  EXPECT_EQ(error_of([&] {
              g.add_node(OpKind::kGeluGrad, {a, b});
            }),
            "gelu_grad: dy [2, 3, 4] and x [3, 3, 4] differ");
}

std::vector<double> random_doubles(int64_t n, uint64_t seed, double scale) {
  SplitMix64 rng(seed);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = (2.0 * rng.unit() - 1.0) * scale;
  return v;
}

// Runs `g` in all three modes with the same (fp32-representable) inputs; returns the fp64,
// fp32 and chip values of `out`.
struct ThreeModes {
  std::vector<double> f64;
  std::vector<float> f32, chip;
};

ThreeModes run_three(const Graph& g, int out, const std::vector<int32_t>& ids = {}) {
  Executor<double> e64(g, Numerics::kF64);
  Executor<float> e32(g, Numerics::kF32), ech(g, Numerics::kChip);
  uint64_t seed = 1;
  for (const Value& v : g.values()) {
    if (v.kind == ValueKind::kNode) continue;
    if (v.dtype == DType::kI32) {
      e64.set_labels(v.id, ids);
      e32.set_labels(v.id, ids);
      ech.set_labels(v.id, ids);
      continue;
    }
    std::vector<double> d = random_doubles(num_elements(v.shape), seed++, 2.0);
    std::vector<float> f(d.begin(), d.end());
    for (size_t i = 0; i < d.size(); ++i) d[i] = f[i];
    e64.set(v.id, d);
    e32.set(v.id, f);
    ech.set(v.id, f);
  }
  e64.run();
  e32.run();
  ech.run();
  return {e64.get(out), e32.get(out), ech.get(out)};
}

void expect_close(const ThreeModes& r, double f32_tol, double chip_tol) {
  ASSERT_EQ(r.f64.size(), r.f32.size());
  for (size_t i = 0; i < r.f64.size(); ++i) {
    EXPECT_NEAR(r.f32[i], r.f64[i], f32_tol * (1 + std::abs(r.f64[i]))) << "f32 element " << i;
    EXPECT_NEAR(r.chip[i], r.f64[i], chip_tol * (1 + std::abs(r.f64[i]))) << "chip element " << i;
  }
}

TEST(TransformerNumerics, ModesAgreeOnEveryForwardAndBackwardOp) {
  Graph g;
  const int x = g.add_input("x", {3, 4, 16});
  const int dy = g.add_input("dy", {3, 4, 16});
  const int gain = g.add_param("gain", {16}), bias = g.add_param("bias", {16});
  const Attrs ln = Attrs::layer_norm(1e-5);
  const std::vector<int> outs = {
      g.add_node(OpKind::kLayerNorm, {x, gain, bias}, ln),
      g.add_node(OpKind::kLayerNormGrad, {dy, x, gain}, ln),
      g.add_node(OpKind::kLayerNormGainGrad, {dy, x}, ln),
      g.add_node(OpKind::kGelu, {x}),
      g.add_node(OpKind::kGeluGrad, {dy, x}),
      g.add_node(OpKind::kSoftmax, {x}),
      g.add_node(OpKind::kSoftmaxGrad, {dy, g.add_node(OpKind::kSoftmax, {x})}),
      g.add_node(OpKind::kMul, {x, gain}),
      g.add_node(OpKind::kScale, {x}, Attrs::scaled(0.125)),
  };
  for (int out : outs) {
    SCOPED_TRACE(g.value(out).name + " = " +
                 std::string(op_name(g.node(g.value(out).producer).op)));
    expect_close(run_three(g, out), 1e-5, 1e-4);
  }
}

TEST(TransformerNumerics, ChipBatchMatMulRoundsOperandsToBf16) {
  Graph g;
  const int a = g.add_input("a", {2, 3, 16, 8}), b = g.add_input("b", {2, 3, 12, 8});
  const int c = g.add_node(OpKind::kBatchMatMul, {a, b}, Attrs::batch_matmul(false, true));
  const ThreeModes r = run_three(g, c);
  expect_close(r, 1e-5, 3e-2);  // bf16 operands: 8 bits of mantissa
  double worst = 0;
  for (size_t i = 0; i < r.f64.size(); ++i) worst = std::max(worst, std::abs(r.chip[i] - r.f64[i]));
  EXPECT_GT(worst, 1e-4);  // the chip really rounds
}

TEST(TransformerNumerics, CausalSoftmaxMasksTheFuture) {
  Graph g;
  const int x = g.add_input("x", {2, 3, 5});  // S = 3 queries, the last 3 of T = 5 positions
  const int y = g.add_node(OpKind::kSoftmax, {x}, Attrs::softmax(true));
  const ThreeModes r = run_three(g, y);
  for (int b = 0; b < 2; ++b)
    for (int s = 0; s < 3; ++s) {
      double sum = 0;
      for (int t = 0; t < 5; ++t) {
        const size_t i = static_cast<size_t>((b * 3 + s) * 5 + t);
        if (t > s + 2) {
          EXPECT_EQ(r.chip[i], 0.0f);
          EXPECT_EQ(r.f32[i], 0.0f);
          EXPECT_EQ(r.f64[i], 0.0);
        } else {
          EXPECT_GT(r.chip[i], 0.0f);
        }
        sum += r.f64[i];
      }
      EXPECT_NEAR(sum, 1.0, 1e-12);
    }
  expect_close(r, 1e-6, 1e-5);
}

TEST(TransformerNumerics, EmbeddingCopiesRowsAndScatterAddsGradients) {
  Graph g;
  const int table = g.add_param("table", {4, 3});
  const int ids = g.add_input("ids", {5}, DType::kI32);
  const int y = g.add_node(OpKind::kEmbedding, {table, ids});
  const int back = g.add_node(OpKind::kEmbeddingGrad, {y, ids}, Attrs::reshape({4, 3}));
  Executor<float> ex(g, Numerics::kChip);
  ex.set(table, {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32});
  ex.set_labels(ids, {3, 0, 3, 3, 1});
  ex.run();
  EXPECT_EQ(ex.get(y),
            (std::vector<float>{30, 31, 32, 0, 1, 2, 30, 31, 32, 30, 31, 32, 10, 11, 12}));
  EXPECT_EQ(ex.get(back), (std::vector<float>{0, 1, 2, 10, 11, 12, 0, 0, 0, 90, 93, 96}));
  ex.set_labels(ids, {3, 0, 4, 3, 1});
  EXPECT_EQ(error_of([&] { ex.run(); }), "embedding: id 4 at position 2 is outside [0, 4)");
}

TEST(TransformerNumerics, HeadSplitThenMergeIsTheIdentity) {
  Graph g;
  const int x = g.add_input("x", {2, 5, 12});
  const int heads = g.add_node(OpKind::kPermute,
                               {g.add_node(OpKind::kReshape, {x}, Attrs::reshape({2, 5, 3, 4}))},
                               Attrs::permute({0, 2, 1, 3}));
  const int merged = g.add_node(
      OpKind::kReshape, {g.add_node(OpKind::kPermute, {heads}, Attrs::permute({0, 2, 1, 3}))},
      Attrs::reshape({2, 5, 12}));
  Executor<float> ex(g, Numerics::kChip);
  std::vector<float> in(120);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
  ex.set(x, in);
  ex.run();
  EXPECT_EQ(ex.get(merged), in);
  // heads[b, h, t, j] = x[b, t, h * 4 + j]
  const std::vector<float>& h = ex.get(heads);
  for (int b = 0; b < 2; ++b)
    for (int hh = 0; hh < 3; ++hh)
      for (int t = 0; t < 5; ++t)
        for (int j = 0; j < 4; ++j)
          EXPECT_EQ(h[static_cast<size_t>(((b * 3 + hh) * 5 + t) * 4 + j)],
                    in[static_cast<size_t>((b * 5 + t) * 12 + hh * 4 + j)]);
}

TEST(TransformerNumerics, DropoutFollowsTheRngUnitsStream) {
  Graph g;
  const int x = g.add_input("x", {64, 64});
  const int kept_half = g.add_node(OpKind::kDropout, {x}, Attrs::dropout(0.5, 42));
  const int none = g.add_node(OpKind::kDropout, {x}, Attrs::dropout(0.0, 42));
  Executor<float> ex(g, Numerics::kChip);
  std::vector<float> in(64 * 64);
  for (size_t i = 0; i < in.size(); ++i) in[i] = 0.25f + static_cast<float>(i % 7);
  ex.set(x, in);
  ex.run();
  EXPECT_EQ(ex.get(none), in);
  std::vector<uint32_t> words(in.size());
  numerics::philox_stream(42, 0, words.data(), static_cast<int64_t>(words.size()));
  int dropped = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const bool keep = words[i] >= 0x80000000u;
    EXPECT_EQ(ex.get(kept_half)[i], keep ? in[i] * 2.0f : 0.0f) << i;
    dropped += keep ? 0 : 1;
  }
  EXPECT_NEAR(dropped / 4096.0, 0.5, 0.03);
}

// Cross-entropy over N = batch x context rows of a byte vocabulary (the transformer's loss).
TEST(TransformerNumerics, CrossEntropyOverManyRows) {
  Graph g;
  const int logits = g.add_input("logits", {2048, 256});
  const int labels = g.add_input("labels", {2048}, DType::kI32);
  const int loss = g.add_node(OpKind::kSoftmaxCrossEntropy, {logits, labels});
  std::vector<int32_t> ids(2048);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 37) % 256);
  expect_close(run_three(g, loss, ids), 1e-5, 1e-5);
}

}  // namespace
}  // namespace tessera::graph
