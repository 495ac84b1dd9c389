// Pass lower on reduce_max and reduce_max_grad (kernels_reduce_max.h): the op and the backward
// pass autodiff builds for it, run on the timed core, equal the host executor in chip numerics
// word for word, on odd shapes (reduced dims before, between and after kept ones; more rows than
// one stream group), with ties (the gradient goes to the first maximum), all -inf groups (-inf)
// and NaNs (NaN wins; no gradient).
#include <limits>
#include <optional>

#include <gtest/gtest.h>

#include "graph/autodiff.h"
#include "support/node_on_chip.h"

namespace tessera::compiler {
namespace {

using graph::Attrs, graph::OpKind, graph::Shape;
using testing::expect_graph_matches_host;

const char* const kConfigs[] = {"small", "tpu-v2-like"};  // a small core and a wide one

struct Case {
  Shape big, small;
};
const Case kCases[] = {{{7, 37}, {37}},        {{7, 37}, {7, 1}},      {{3, 5}, {1}},
                       {{3, 4, 5}, {3, 1, 5}}, {{2, 3, 4, 9}, {4, 1}}, {{2, 3, 4, 9}, {3, 1, 9}},
                       {{2, 1, 3}, {1, 1, 3}}, {{3, 29, 5}, {5}},      {{29, 3, 5}, {3, 1}},
                       {{13, 2, 9}, {1, 2, 1}}};

// x (a parameter, through `pre` when given) -> reduce_max -> the backward pass from dy: checks
// the output, reduce_max_grad's output and x's gradient.
void expect_reduce_max_matches_host(const std::string& cfg, const Case& c,
                                    std::optional<OpKind> pre, double lo, double hi) {
  graph::Graph g;
  const int x = g.add_param("x", c.big);
  const int in = pre ? g.add_node(*pre, {x}, {}, "pre") : x;
  const int y = g.add_node(OpKind::kReduceMax, {in}, Attrs::reshape(c.small), "y");
  const int dy = g.add_input("dy", c.small);
  const std::vector<int> grads = graph::append_backward(g, y, dy);
  ASSERT_EQ(grads.size(), 1u);
  expect_graph_matches_host(cfg, g, y, lo, hi);
  int checked = 0;
  for (const graph::Node& n : g.nodes())
    if (n.op == OpKind::kReduceMaxGrad) {
      expect_graph_matches_host(cfg, g, n.output, lo, hi);
      ++checked;
    }
  EXPECT_EQ(checked, 1);
  expect_graph_matches_host(cfg, g, grads[0], lo, hi);
}

TEST(ReduceMaxLowering, ReduceMaxAndItsGradient) {
  for (const char* cfg : kConfigs)
    for (const Case& c : kCases) {
      testing::expect_node_matches_host(
          cfg, testing::one_op(OpKind::kReduceMax, {c.big}, Attrs::reshape(c.small)));
      expect_reduce_max_matches_host(cfg, c, std::nullopt, -2, 2);
    }
}

TEST(ReduceMaxLowering, TiesGoToTheFirstMaximum) {
  // relu of mostly negative inputs: most groups hold several zeros, some only zeros.
  for (const char* cfg : kConfigs)
    for (const Case& c : kCases) expect_reduce_max_matches_host(cfg, c, OpKind::kRelu, -2, 0.3);
}

TEST(ReduceMaxLowering, NaNWins) {
  // log of inputs in [-0.2, 2): NaN where an input is negative.
  for (const char* cfg : kConfigs)
    for (const Case& c : kCases) expect_reduce_max_matches_host(cfg, c, OpKind::kLog, -0.2, 2);
}

TEST(ReduceMaxLowering, AllMinusInfinityGroupsGiveMinusInfinity) {
  const double inf = std::numeric_limits<double>::infinity();
  for (const char* cfg : kConfigs) {
    graph::Graph g;  // rows 3 and 4 are padding only
    const int x = g.add_input("x", {3, 5});
    const int p = g.add_node(OpKind::kPad, {x}, Attrs::padded({5, 7}, {0, 1}, -inf), "p");
    const int y = g.add_node(OpKind::kReduceMax, {p}, Attrs::reshape({5, 1}), "y");
    expect_graph_matches_host(cfg, g, y);
    graph::Executor<float> host(g, graph::Numerics::kChip);
    host.set(x, std::vector<float>(15, 1.0f));
    host.run();
    EXPECT_EQ(host.get(y)[4], -std::numeric_limits<float>::infinity());
  }
}

}  // namespace
}  // namespace tessera::compiler
