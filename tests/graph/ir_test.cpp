
#include <gtest/gtest.h>

#include "common/error.h"
#include "graph/graph.h"
#include "graph/ops.h"
#include "support/error_of.h"

namespace tessera::graph {
namespace {

using testing::error_of;

TEST(OpTable, MnemonicsAreUniqueAndRoundTrip) {
  for (const OpInfo& info : kOpTable) {
    ASSERT_TRUE(op_from_mnemonic(info.mnemonic).has_value()) << info.mnemonic;
    EXPECT_EQ(*op_from_mnemonic(info.mnemonic), info.kind);
    EXPECT_EQ(&op_info(info.kind), &info);
  }
  EXPECT_FALSE(op_from_mnemonic("attention").has_value());
}

TEST(ShapeInference, ForwardOpsGiveDocumentedShapes) {
  Graph g;
  const int x = g.add_input("x", {2, 28, 28, 1});
  const int w = g.add_param("w", {5, 5, 1, 8});
  const int c = g.add_node(OpKind::kConv2D, {x, w}, Attrs::conv(1, 2));
  EXPECT_EQ(g.value(c).shape, (Shape{2, 28, 28, 8}));
  const int s2 = g.add_node(OpKind::kConv2D, {x, w}, Attrs::conv(2, 0));
  EXPECT_EQ(g.value(s2).shape, (Shape{2, 12, 12, 8}));
  const int p = g.add_node(OpKind::kMaxPool2D, {c}, Attrs::pool(2, 2));
  EXPECT_EQ(g.value(p).shape, (Shape{2, 14, 14, 8}));
  const int f = g.add_node(OpKind::kReshape, {p}, Attrs::reshape({2, 1568}));
  const int t = g.add_node(OpKind::kTranspose, {f});
  EXPECT_EQ(g.value(t).shape, (Shape{1568, 2}));
  const int r = g.add_node(OpKind::kReduceRows, {c});
  EXPECT_EQ(g.value(r).shape, (Shape{8}));
  const int labels = g.add_input("labels", {2}, DType::kI32);
  const int logits = g.add_input("logits", {2, 10});
  const int loss = g.add_node(OpKind::kSoftmaxCrossEntropy, {logits, labels});
  EXPECT_EQ(g.value(loss).shape, Shape{});
  g.verify();
}

TEST(ShapeInference_bad, ErrorsNameTheOpAndTheShapes) {
  Graph g;
  const int a = g.add_input("a", {4, 3});
  const int b = g.add_input("b", {5, 2});
  const int v = g.add_input("v", {7});
  const int x = g.add_input("x", {1, 8, 8, 3});
  const int w = g.add_param("w", {3, 3, 2, 4});
  const int lab = g.add_input("lab", {3}, DType::kI32);
  EXPECT_EQ(error_of([&] {
              g.add_node(OpKind::kMatMul, {a, b}, {}, "fc");
            }),
            "matmul 'fc': inner dimensions differ: a [4, 3] x b [5, 2]");
  EXPECT_EQ(error_of([&] {
              g.add_node(OpKind::kAdd, {a, v});
            }),
            "add: b [7] does not broadcast to a [4, 3] (b's shape must be a suffix of a's)");
  EXPECT_EQ(error_of([&] {
              g.add_node(OpKind::kConv2D, {x, w});
            }),
            "conv2d: input channels differ: x [1, 8, 8, 3] vs w [3, 3, 2, 4] (NHWC, HWIO)");
  EXPECT_EQ(error_of([&] {
              g.add_node(OpKind::kMatMul, {v, a});
            }),
            "matmul: a must have rank 2, got [7]");
  EXPECT_EQ(error_of([&] {
              g.add_node(OpKind::kSoftmaxCrossEntropy, {a, lab});
            }),
            "softmax_cross_entropy: labels [3] do not match the batch of logits [4, 3]");
  EXPECT_EQ(error_of([&] {
              g.add_node(OpKind::kSoftmaxCrossEntropy, {a, a});
            }),
            "softmax_cross_entropy: labels must have rank 1, got [4, 3]");
  EXPECT_EQ(error_of([&] { g.add_node(OpKind::kRelu, {lab}); }),
            "relu: input 0 must be f32, got i32");
  EXPECT_EQ(error_of([&] {
              g.add_node(OpKind::kReshape, {a}, Attrs::reshape({5, 2}));
            }),
            "reshape: element counts differ: x [4, 3] vs target [5, 2]");
  EXPECT_EQ(error_of([&] { g.add_node(OpKind::kMaxPool2D, {x}, Attrs::pool(9, 1)); }),
            "maxpool2d: window 9 larger than x [1, 8, 8, 3]");
  EXPECT_EQ(error_of([&] { g.add_node(OpKind::kRelu, {a, b}); }), "relu: expects 1 inputs, got 2");
  EXPECT_EQ(error_of([&] { g.add_node(OpKind::kRelu, {99}); }),
            "relu: input value id 99 does not exist");
  EXPECT_EQ(error_of([&] { g.add_input("a", {1}); }), "graph: duplicate value name 'a'");
}

TEST(Graph, DumpListsValuesAndNodesWithAttributes) {
  Graph g;
  const int x = g.add_input("x", {2, 4, 4, 1});
  const int w = g.add_param("w", {3, 3, 1, 2});
  const int c = g.add_node(OpKind::kConv2D, {x, w}, Attrs::conv(1, 1), "conv");
  g.add_node(OpKind::kMaxPool2D, {c}, Attrs::pool(2, 2));
  EXPECT_EQ(g.dump(),
            "input x: f32[2, 4, 4, 1]\n"
            "param w: f32[3, 3, 1, 2]\n"
            "conv: f32[2, 4, 4, 2] = conv2d(x, w) stride=1 pad=1\n"
            "%3: f32[2, 2, 2, 2] = maxpool2d(conv) kernel=2 stride=2\n");
}

TEST(Graph, FindValueByNameAndListParamsAndInputs) {
  Graph g;
  const int x = g.add_input("x", {1, 2});
  const int w = g.add_param("w", {2, 2});
  g.add_node(OpKind::kMatMul, {x, w}, {}, "y");
  EXPECT_EQ(g.find_value("w"), w);
  EXPECT_EQ(g.params(), std::vector<int>{w});
  EXPECT_EQ(g.inputs(), std::vector<int>{x});
  EXPECT_EQ(error_of([&] { g.find_value("z"); }), "graph: no value named 'z'");
}

}  // namespace
}  // namespace tessera::graph
