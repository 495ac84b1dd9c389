// Graph constants (graph.h): the graph holds their values; executors bind them when made (set()
// refuses them); autodiff gives them no gradient; a wrong value count or shape is an Error; dump()
// lists them as "const".
#include <gtest/gtest.h>

#include "graph/autodiff.h"
#include "graph/executor.h"
#include "support/error_of.h"

namespace tessera::graph {
namespace {

TEST(GraphConstant, HoldsItsValuesAndGetsNoGradient) {
  Graph g;
  const int x = g.add_input("x", {2, 3});
  const int w = g.add_param("w", {3});
  const int c = g.add_constant("c", {3}, {1.0f, -2.0f, 0.5f});
  const int y = g.add_node(OpKind::kMul, {g.add_node(OpKind::kMul, {x, w}), c}, {}, "y");
  EXPECT_EQ(g.params(), std::vector<int>{w});
  EXPECT_EQ(g.constants(), std::vector<int>{c});
  EXPECT_NE(g.dump().find("const c: f32[3]\n"), std::string::npos) << g.dump();

  Executor<float> ex(g, Numerics::kF32);
  ex.set(x, {1, 2, 3, 4, 5, 6});
  ex.set(w, {1, 1, 2});
  ex.run();
  EXPECT_EQ(ex.get(y), (std::vector<float>{1, -4, 3, 4, -10, 6}));
  EXPECT_EQ(testing::error_of([&] {
              ex.set(c, {0, 0, 0});
            }),
            "value 'c': only f32 inputs and parameters can be bound with set()");

  const int seed = g.add_input("dy", {2, 3});
  const std::vector<int> grads = append_backward(g, y, seed);
  ASSERT_EQ(grads.size(), 1u);  // one per parameter: none for the constant
  EXPECT_GE(grads[0], 0);
}

TEST(GraphConstant, ValuesMustFitTheShape) {
  Graph g;
  EXPECT_EQ(testing::error_of([&] {
              g.add_constant("c", {2, 2}, {1, 2, 3});
            }),
            "constant 'c': 3 values for shape [2, 2]");
  EXPECT_EQ(testing::error_of([&] { g.add_constant("c", {0}, {}); }),
            "constant 'c': dimension < 1 in shape [0]");
}

}  // namespace
}  // namespace tessera::graph
