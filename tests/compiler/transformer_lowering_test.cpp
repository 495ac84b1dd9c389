// Pass lower on one-op graphs of the transformer ops: every op and its gradient ops compiled
// (lower_transformer.cpp) and run on the timed core equal the host executor in chip numerics,
// element for element, on small odd shapes.
#include <gtest/gtest.h>

#include "support/node_on_chip.h"

namespace tessera::compiler {
namespace {

using testing::expect_node_matches_host;
using testing::one_op;

using graph::Attrs;
using graph::OpKind;
using graph::Shape;

const char* const kConfigs[] = {"small", "tpu-v2-like"};

TEST(TransformerLowering, EmbeddingGatherAndScatterAddGradient) {
  for (const char* cfg : kConfigs)
    for (int64_t D : {5, 8, 19}) {
      graph::Graph g;
      const int table = g.add_input("table", {11, D});
      const int ids = g.add_input("ids", {3, 7}, graph::DType::kI32);
      g.add_node(OpKind::kEmbedding, {table, ids}, {}, "out");
      expect_node_matches_host(cfg, g, 11);
      graph::Graph gg;
      const int dy = gg.add_input("dy", {3, 7, D});
      const int ids2 = gg.add_input("ids", {3, 7}, graph::DType::kI32);
      gg.add_node(OpKind::kEmbeddingGrad, {dy, ids2}, Attrs::reshape({11, D}), "out");
      expect_node_matches_host(cfg, gg, 11);  // 21 ids over 11 rows: repeats accumulate
    }
}

// A table larger than vector memory ("small": 2048 rows of 8 words; 2,500 or 5,000 table rows):
// the gradient accumulates it in chunks of rows, the ids outside a chunk adding to its discard
// row; repeated ids, ids in every chunk and chunks no id falls in.
TEST(TransformerLowering, EmbeddingGradientOfATableLargerThanVectorMemory) {
  for (const int64_t D : {8, 16}) {
    graph::Graph g;
    const int dy = g.add_input("dy", {300, D});
    const int ids = g.add_input("ids", {300}, graph::DType::kI32);
    g.add_node(OpKind::kEmbeddingGrad, {dy, ids}, Attrs::reshape({2500, D}), "out");
    SCOPED_TRACE("D=" + std::to_string(D));
    expect_node_matches_host("small", g, 2500);
    expect_node_matches_host("small", g, 700);  // ids in the first chunk only
  }
}

TEST(TransformerLowering, LayerNormAndItsGradients) {
  for (const char* cfg : kConfigs) {
    const Shape x{3, 5, 13}, v{13};
    expect_node_matches_host(cfg, one_op(OpKind::kLayerNorm, {x, v, v}, Attrs::layer_norm(1e-5)));
    expect_node_matches_host(cfg,
                             one_op(OpKind::kLayerNormGrad, {x, x, v}, Attrs::layer_norm(1e-5)));
  }
  // The host's column sums run over 8 sublanes (small has 2).
  expect_node_matches_host(
      "tpu-v2-like",
      one_op(OpKind::kLayerNormGainGrad, {{3, 5, 13}, {3, 5, 13}}, Attrs::layer_norm(1e-5)));
}

TEST(TransformerLowering, SoftmaxCausalAndItsGradient) {
  for (const char* cfg : kConfigs)
    for (bool causal : {false, true}) {
      expect_node_matches_host(cfg,
                               one_op(OpKind::kSoftmax, {{2, 3, 11, 11}}, Attrs::softmax(causal)));
      expect_node_matches_host(cfg, one_op(OpKind::kSoftmaxGrad, {{2, 3, 11, 11}, {2, 3, 11, 11}}));
    }
}

TEST(TransformerLowering, GeluScaleMulAndGradients) {
  for (const char* cfg : kConfigs) {
    const Shape x{7, 37};
    expect_node_matches_host(cfg, one_op(OpKind::kGelu, {x}));
    expect_node_matches_host(cfg, one_op(OpKind::kGeluGrad, {x, x}));
    expect_node_matches_host(cfg, one_op(OpKind::kScale, {x}, Attrs::scaled(0.3)));
    expect_node_matches_host(cfg, one_op(OpKind::kMul, {x, x}));
    expect_node_matches_host(cfg, one_op(OpKind::kMul, {x, {37}}));
  }
}

TEST(TransformerLowering, DropoutFromTheRngUnit) {
  for (const char* cfg : kConfigs)
    for (double rate : {0.0, 0.1, 0.5}) {
      expect_node_matches_host(cfg, one_op(OpKind::kDropout, {{5, 67}}, Attrs::dropout(rate, 7)));
    }
}

TEST(TransformerLowering, BatchMatMulWithEitherOperandTransposed) {
  for (const char* cfg : kConfigs) {
    expect_node_matches_host(cfg, one_op(OpKind::kBatchMatMul, {{2, 3, 9, 5}, {2, 3, 5, 7}}));
    expect_node_matches_host(cfg, one_op(OpKind::kBatchMatMul, {{2, 3, 9, 5}, {2, 3, 7, 5}},
                                         Attrs::batch_matmul(false, true)));
    expect_node_matches_host(cfg, one_op(OpKind::kBatchMatMul, {{2, 3, 5, 9}, {2, 3, 5, 7}},
                                         Attrs::batch_matmul(true, false)));
    expect_node_matches_host(
        cfg, one_op(OpKind::kBatchMatMul, {{3, 5, 9}, {3, 7, 5}}, Attrs::batch_matmul(true, true)));
  }
}

TEST(TransformerLowering, PermuteSelectAndSelectGrad) {
  for (const char* cfg : kConfigs) {
    expect_node_matches_host(
        cfg, one_op(OpKind::kPermute, {{2, 5, 3, 2, 4}}, Attrs::permute({2, 0, 3, 1, 4})));
    expect_node_matches_host(
        cfg, one_op(OpKind::kPermute, {{3, 2, 5, 2, 4}}, Attrs::permute({1, 3, 0, 2, 4})));
    expect_node_matches_host(
        cfg, one_op(OpKind::kPermute, {{2, 3, 5, 4}}, Attrs::permute({0, 2, 1, 3})));
    expect_node_matches_host(cfg, one_op(OpKind::kPermute, {{3, 5, 7}}, Attrs::permute({2, 0, 1})));
    expect_node_matches_host(cfg, one_op(OpKind::kPermute, {{5, 7}}, Attrs::permute({0, 1})));
    for (int index : {0, 1, 2}) {
      expect_node_matches_host(cfg, one_op(OpKind::kSelect, {{3, 2, 5, 7}}, Attrs::select(index)));
      expect_node_matches_host(
          cfg, one_op(OpKind::kSelectGrad, {{2, 5, 7}}, Attrs::select(index, {3, 2, 5, 7})));
    }
  }
}

}  // namespace
}  // namespace tessera::compiler
