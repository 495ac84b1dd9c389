// Pass lower on one-op graphs of the transformer ops: every op and its gradient ops compiled
// (lower_transformer.cpp) and run on the timed core equal the host executor in chip numerics,
// element for element, on small odd shapes.
#include <cstring>
#include <functional>

#include <gtest/gtest.h>

#include "common/splitmix64.h"
#include "compiler/pipeline.h"
#include "core/core.h"
#include "core/spec.h"
#include "graph/executor.h"
#include "support/bit_equal.h"
#include "support/kernel_config.h"

namespace tessera::compiler {
namespace {

using testing::expect_bit_equal;
using testing::kernel_config;

using graph::Attrs;
using graph::OpKind;
using graph::Shape;

std::vector<float> random_values(size_t n, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(4.0 * rng.unit() - 2.0);
  return v;
}

// The graph's last node lowered alone (every value at its own HBM address, scratch above them)
// and run on the timed core, vs the host executor in chip numerics: every output word equal.
// Integer inputs (ids) are drawn from [0, id_range).
void expect_node_matches_host(const std::string& cfg, const graph::Graph& g,
                              uint32_t id_range = 1) {
  const core::CoreSpec spec = kernel_config(cfg);
  graph::Executor<float> host(g, graph::Numerics::kChip);
  Pipeline p;
  p.spec = &spec;
  p.graph = g;
  int64_t next = 0;
  std::vector<std::vector<float>> data(g.values().size());
  for (const graph::Value& v : g.values()) {
    const int64_t words = std::max<int64_t>(1, graph::num_elements(v.shape));
    p.hbm[v.id] = next;
    next += words;
    if (v.kind == graph::ValueKind::kNode) continue;
    if (v.dtype == graph::DType::kI32) {
      SplitMix64 rng(static_cast<uint64_t>(v.id));
      std::vector<int32_t> ids(static_cast<size_t>(words));
      for (int32_t& id : ids) id = static_cast<int32_t>(rng.next() % id_range);
      std::vector<float>& d = data[static_cast<size_t>(v.id)];
      d.resize(ids.size());
      std::memcpy(d.data(), ids.data(), ids.size() * 4);
      host.set_labels(v.id, ids);
      continue;
    }
    data[static_cast<size_t>(v.id)] = random_values(static_cast<size_t>(words), 11 + v.id);
    host.set(v.id, data[static_cast<size_t>(v.id)]);
  }
  p.out.stats.hbm_words = next;
  host.run();
  const graph::Node& n = g.nodes().back();
  Codegen cg(spec);
  ASSERT_TRUE(lower_transformer_op(p, cg, n)) << graph::op_name(n.op);
  isa::Program prog = cg.finish();
  for (const graph::Value& v : g.values()) {
    std::vector<float> words = data[static_cast<size_t>(v.id)];
    if (v.kind == graph::ValueKind::kNode)  // garbage: the kernel must write every word
      words.assign(static_cast<size_t>(std::max<int64_t>(1, graph::num_elements(v.shape))),
                   1234.5f);
    std::vector<uint32_t> w(words.size());
    std::memcpy(w.data(), words.data(), words.size() * 4);
    prog.data.push_back(
        isa::DataSegment{isa::Space::Hbm, static_cast<uint64_t>(p.hbm.at(v.id)), w});
  }
  core::Core core(spec, prog);
  core.run();
  const std::vector<float>& want = host.get(n.output);
  std::vector<float> got(want.size());
  core.state().hbm.read_block(p.hbm.at(n.output), reinterpret_cast<uint32_t*>(got.data()),
                              static_cast<int64_t>(got.size()));
  expect_bit_equal(got, want, cfg + " " + std::string(graph::op_name(n.op)));
}

// A graph of inputs of the given shapes and one node over them.
graph::Graph one_op(OpKind op, const std::vector<Shape>& shapes, Attrs attrs = {}) {
  graph::Graph g;
  std::vector<int> ins;
  for (size_t i = 0; i < shapes.size(); ++i)
    ins.push_back(g.add_input("in" + std::to_string(i), shapes[i]));
  g.add_node(op, ins, std::move(attrs), "out");
  return g;
}

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
