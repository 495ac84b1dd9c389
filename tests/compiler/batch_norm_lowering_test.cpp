// Pass lower on batch normalisation's per-channel ops (lower_batch_norm.cpp) and on the whole
// training computation of graph/batch_norm.h with its backward pass: run on the timed core, every
// word equal to the host executor in chip numerics, for channel counts below, at and above a
// vector register's words (the [C] vectors' pattern of one, two or many vregs, or repeated per
// chunk when too long) and rows in several chunks of vector memory.
#include <gtest/gtest.h>

#include "graph/autodiff.h"
#include "graph/batch_norm.h"
#include "support/node_on_chip.h"

namespace tessera::compiler {
namespace {

using graph::OpKind;
using graph::Shape;
using testing::expect_graph_matches_host;
using testing::expect_node_matches_host;
using testing::one_op;

struct Rows {
  int64_t R, C;
};
// "small": 2 sublanes x 8 lanes (16 words a vreg), 2048 rows of vector memory; tpu-v2-like:
// 8 x 128 (1024 words), 32768 rows.
const Rows kSmall[] = {{7, 5}, {3001, 5}, {40, 16}, {9, 32}, {13, 37}, {5, 300}, {4, 2100}};
const Rows kV2[] = {{6, 64}, {33, 2048}, {5, 3}, {3, 1000}, {37, 300}, {20011, 64}};

// batch_norm and batch_norm_grad: one streamed pass each.
void expect_streams_match_host(const std::string& cfg, const Rows& s) {
  SCOPED_TRACE(cfg + " R=" + std::to_string(s.R) + " C=" + std::to_string(s.C));
  const Shape x{s.R, s.C}, v{s.C};
  expect_node_matches_host(cfg, one_op(OpKind::kBatchNorm, {x, v, v, v, v}));
  expect_node_matches_host(cfg, one_op(OpKind::kBatchNormGrad, {x, x, v, v, v, v}));
}

TEST(BatchNormLowering, NormalisationAndItsGradientEqualTheHost) {
  for (const Rows& s : kSmall) expect_streams_match_host("small", s);
  for (const Rows& s : kV2) expect_streams_match_host("tpu-v2-like", s);
}

// channel_squares and channel_dot: reduce_rows' sums, whose host order has 8 sublanes (small has
// 2): rows short of a whole group of 8 (the padding adds exact zeros), several chunks of vector
// memory (20,011 rows) and columns in several blocks.
TEST(BatchNormLowering, ChannelSumsEqualTheHost) {
  for (const Rows& s : kV2) {
    SCOPED_TRACE("R=" + std::to_string(s.R) + " C=" + std::to_string(s.C));
    const Shape x{s.R, s.C}, v{s.C};
    expect_node_matches_host("tpu-v2-like", one_op(OpKind::kChannelSquares, {x, v}));
    expect_node_matches_host("tpu-v2-like", one_op(OpKind::kChannelDot, {x, x, v}));
  }
}

// The training computation (statistics, normalisation) and its backward pass as autodiff builds
// it, over an NHWC activation: x's gradient and gamma's. On a core of 8 sublanes: beta's gradient
// is a reduce_rows, whose host order is the column sum over 8 sublanes.
TEST(BatchNormLowering, TrainingForwardAndBackwardEqualTheHost) {
  const std::string cfg = "tpu-v2-like";
  graph::Graph g;
  const int x = g.add_param("x", {2, 5, 3, 24});
  const int gamma = g.add_param("gamma", {24}), beta = g.add_param("beta", {24});
  const graph::BatchStatistics b = graph::batch_norm_training(g, x, gamma, beta, 1e-5, "bn");
  const int dy = g.add_input("dy", {2, 5, 3, 24});
  const std::vector<int> grads = graph::append_backward(g, b.y, dy);
  expect_graph_matches_host(cfg, g, grads[0]);
  expect_graph_matches_host(cfg, g, grads[1]);
  expect_graph_matches_host(cfg, g, b.var);
}

}  // namespace
}  // namespace tessera::compiler
