// Pass lower on graphs of the element-wise math and view ops (pad included) (lower_math_views.cpp):
// every op, and the backward pass autodiff builds for it, run on the timed core equal the host
// executor in chip numerics, element for element, on small odd shapes (sizes not a multiple of a
// vector register, strided and negative-step slices, broadcasts over inner, outer and middle dims).
#include <gtest/gtest.h>

#include "compiler/pipeline.h"
#include "graph/autodiff.h"
#include "support/kernel_config.h"
#include "support/node_on_chip.h"

namespace tessera::compiler {
namespace {

using testing::expect_graph_matches_host;
using testing::expect_node_matches_host;
using testing::one_op;

using graph::Attrs;
using graph::OpKind;
using graph::Shape;

const char* const kConfigs[] = {"small", "tpu-v2-like"};

// y = op(x) for the parameter x, then the backward pass from the input dy; checks x's gradient.
void expect_gradient_matches_host(const std::string& cfg, OpKind op, const Shape& x_shape,
                                  const Attrs& attrs, const Shape& y_shape, double lo, double hi) {
  graph::Graph g;
  const int x = g.add_param("x", x_shape);
  const int y = g.add_node(op, {x}, attrs, "y");
  const int dy = g.add_input("dy", y_shape);
  const std::vector<int> grads = graph::append_backward(g, y, dy);
  ASSERT_EQ(grads.size(), 1u);
  expect_graph_matches_host(cfg, g, grads[0], lo, hi);
}

struct Unary {
  OpKind op;
  double lo, hi;  // the inputs' range (positive for log and sqrt)
};
const Unary kUnary[] = {{OpKind::kExp, -4, 4},     {OpKind::kLog, 0.01, 9},
                        {OpKind::kSqrt, 0, 9},     {OpKind::kReciprocal, -3, 3},
                        {OpKind::kSigmoid, -9, 9}, {OpKind::kTanh, -4, 4},
                        {OpKind::kErf, -4, 4}};

TEST(MathViewsLowering, UnaryOpsAndTheirGradients) {
  for (const char* cfg : kConfigs)
    for (const Unary& u : kUnary) {
      expect_node_matches_host(cfg, one_op(u.op, {{7, 37}}), 1, u.lo, u.hi);
      expect_node_matches_host(cfg, one_op(u.op, {{3}}), 1, u.lo, u.hi);
      expect_gradient_matches_host(cfg, u.op, {5, 19}, {}, {5, 19}, u.lo + (u.op == OpKind::kSqrt),
                                   u.hi);
    }
}

// Rows wider than vector memory holds for L of them ("small": 2048 rows of 8 words, so at most
// 1024 columns per chunk): the transpose takes the columns in chunks (1024, 1024 and a ragged 52)
// and the rows in ragged blocks; the values are the host's.
TEST(MathViewsLowering, TransposeOfRowsWiderThanVectorMemory) {
  expect_node_matches_host("small", one_op(OpKind::kTranspose, {{19, 2100}}));
  expect_node_matches_host("small", one_op(OpKind::kTranspose, {{2100, 11}}));
}

TEST(MathViewsLowering, BroadcastAndSumTo) {
  struct Case {
    Shape small, big;
  };
  const Case cases[] = {{{37}, {7, 37}},        {{7, 1}, {7, 37}},      {{1}, {3, 5}},
                        {{3, 1, 5}, {3, 4, 5}}, {{4, 1}, {2, 3, 4, 9}}, {{3, 1, 9}, {2, 3, 4, 9}},
                        {{5, 3}, {5, 3}}};
  for (const char* cfg : kConfigs)
    for (const Case& c : cases) {
      expect_node_matches_host(cfg, one_op(OpKind::kBroadcast, {c.small}, Attrs::reshape(c.big)));
      expect_node_matches_host(cfg, one_op(OpKind::kSumTo, {c.big}, Attrs::reshape(c.small)));
      expect_gradient_matches_host(cfg, OpKind::kBroadcast, c.small, Attrs::reshape(c.big), c.big,
                                   -2, 2);
    }
  // Rows folded in loop trips and a remainder; more rows than one chunk of vector memory holds
  // ("small": 2048 rows of 8 words, one row each: 2045 and 956 rows); rows of several vector
  // registers (37: five rows of vector memory, three vregs) and columns in several blocks of
  // accumulators (300: 128, 128 and 44).
  expect_node_matches_host("small", one_op(OpKind::kSumTo, {{3, 29, 5}}, Attrs::reshape({5})));
  expect_node_matches_host("small", one_op(OpKind::kSumTo, {{29, 3, 5}}, Attrs::reshape({3, 1})));
  expect_node_matches_host("small", one_op(OpKind::kSumTo, {{3001, 5}}, Attrs::reshape({5})));
  expect_node_matches_host("small", one_op(OpKind::kSumTo, {{23, 37}}, Attrs::reshape({1, 37})));
  expect_node_matches_host("small", one_op(OpKind::kSumTo, {{13, 300}}, Attrs::reshape({300})));
  expect_node_matches_host("small", one_op(OpKind::kSumTo, {{300, 13}}, Attrs::reshape({300, 1})));
}

// Bundles of the program of sum_to(x [rows, cols]) -> [1, cols] lowered alone on configs/<cfg>.
int64_t sum_to_bundles(const std::string& cfg, int64_t rows, int64_t cols) {
  const core::CoreSpec spec = testing::kernel_config(cfg);
  Pipeline p;
  p.spec = &spec;
  p.graph = one_op(OpKind::kSumTo, {{rows, cols}}, Attrs::reshape({1, cols}));
  for (const graph::Value& v : p.graph.values()) {
    p.hbm[v.id] = p.out.stats.hbm_words;
    p.out.stats.hbm_words += graph::num_elements(v.shape);
  }
  Codegen cg(spec);
  lower_node(p, cg, p.graph.nodes().back());
  return static_cast<int64_t>(cg.finish().code.size());
}

// The rows are folded in a counted loop: the code does not grow with them (a ResNet's batch
// statistics at 64 channels, from 16 to 8,192 rows; a remainder of 3 rows adds its folds only).
TEST(MathViewsLowering, SumToCodeDoesNotGrowWithItsRows) {
  const int64_t small = sum_to_bundles("tpu-v2-like", 16, 64);
  EXPECT_EQ(sum_to_bundles("tpu-v2-like", 8192, 64), small);
  EXPECT_LT(sum_to_bundles("tpu-v2-like", 8195, 64), small + 8);
  EXPECT_LT(small, 64);
}

TEST(MathViewsLowering, SliceSliceGradAndConcat) {
  struct Case {
    Shape x, starts, steps, y;
  };
  const Case cases[] = {
      {{7, 37}, {1, 2}, {1, 1}, {5, 30}},             // inner runs
      {{7, 37}, {0, 36}, {2, -3}, {4, 12}},           // strided, reversed
      {{4, 5, 6}, {3, 0, 1}, {-1, 2, 1}, {4, 3, 4}},  // reversed outer dim
      {{2, 3, 9}, {0, 1, 0}, {1, 1, 1}, {2, 1, 9}},   // one index of the middle dim
      {{11}, {10}, {-2}, {6}}};
  for (const char* cfg : kConfigs) {
    for (const Case& c : cases) {
      expect_node_matches_host(cfg,
                               one_op(OpKind::kSlice, {c.x}, Attrs::slice(c.y, c.starts, c.steps)));
      expect_gradient_matches_host(cfg, OpKind::kSlice, c.x, Attrs::slice(c.y, c.starts, c.steps),
                                   c.y, -2, 2);
    }
    for (int axis : {0, 1, 2}) {
      Shape a{3, 4, 5}, b{3, 4, 5};
      b[static_cast<size_t>(axis)] = 2;
      expect_node_matches_host(cfg, one_op(OpKind::kConcat, {a, b}, Attrs::concat(axis)));
      graph::Graph g;  // both operands' gradients: slices of dy
      const int pa = g.add_param("a", a), pb = g.add_param("b", b);
      const int y = g.add_node(OpKind::kConcat, {pa, pb}, Attrs::concat(axis), "y");
      Shape ys = a;
      ys[static_cast<size_t>(axis)] += 2;
      const std::vector<int> grads = graph::append_backward(g, y, g.add_input("dy", ys));
      expect_graph_matches_host(cfg, g, grads[0]);
      expect_graph_matches_host(cfg, g, grads[1]);
    }
  }
}

TEST(MathViewsLowering, PadAndItsGradient) {
  struct Case {
    Shape x, starts, y;
    double fill;
  };
  const Case cases[] = {{{7, 37}, {1, 2}, {9, 41}, 0},                     // both dims, zero
                        {{3, 5}, {0, 0}, {3, 6}, -3.4028234663852886e38},  // lowest float
                        {{2, 3, 9}, {1, 0, 3}, {4, 3, 13}, 0.1},  // outer and inner, inexact
                        {{11}, {0}, {11}, 2}};                    // nothing added
  for (const char* cfg : kConfigs)
    for (const Case& c : cases) {
      const Attrs a = Attrs::padded(c.y, c.starts, c.fill);
      expect_node_matches_host(cfg, one_op(OpKind::kPad, {c.x}, a));
      expect_gradient_matches_host(cfg, OpKind::kPad, c.x, a, c.y, -2, 2);
    }
}

}  // namespace
}  // namespace tessera::compiler
