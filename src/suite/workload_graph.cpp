#include "suite/workload_graph.h"

#include <cmath>

#include "common/error.h"
#include "graph/resnet_model.h"

namespace tessera::suite {

namespace {

using graph::Attrs;
using graph::OpKind;

// The sequence length of a bert_D row and the head width of its heads.
constexpr int kBertSequence = 512;
constexpr int kHeadWidth = 64;
constexpr double kLayerNormEps = 1e-5;

graph::Graph gemm_graph(int n) {
  graph::Graph g;
  const int a = g.add_input("a", {n, n});
  const int b = g.add_input("b", {n, n});
  g.add_node(OpKind::kMatMul, {a, b}, {}, "c");
  return g;
}

// dims {B, H, W, Cin, Cout, K, S, P}
graph::Graph conv_graph(const std::vector<int>& d) {
  graph::Graph g;
  const int x = g.add_input("x", {d[0], d[1], d[2], d[3]});
  const int w = g.add_input("w", {d[5], d[5], d[3], d[4]});
  g.add_node(OpKind::kConv2D, {x, w}, Attrs::conv(d[6], d[7]), "y");
  return g;
}

int layer_norm(graph::Graph& g, int x, int d, const std::string& name) {
  const int gain = g.add_input(name + ".gain", {d});
  const int bias = g.add_input(name + ".bias", {d});
  return g.add_node(OpKind::kLayerNorm, {x, gain, bias}, Attrs::layer_norm(kLayerNormEps), name);
}

graph::Graph layer_norm_graph(int rows, int d) {
  graph::Graph g;
  layer_norm(g, g.add_input("x", {rows, d}), d, "y");
  return g;
}

graph::Graph softmax_graph(int rows, int cols) {
  graph::Graph g;
  g.add_node(OpKind::kSoftmax, {g.add_input("x", {rows, cols})}, Attrs::softmax(false), "y");
  return g;
}

// p^T [H, S, S] = softmax over the last (key) axis of q k^T / sqrt(D) for q, k [H, S, D]: the
// transpose of p = softmax over the key axis of k q^T / sqrt(D), each score the same dot product.
int attention_probs_t(graph::Graph& g, int q, int k, int d, const std::string& name) {
  const int st = g.add_node(OpKind::kBatchMatMul, {q, k}, Attrs::batch_matmul(false, true),
                            name + ".scores_t");
  const int scaled =
      g.add_node(OpKind::kScale, {st}, Attrs::scaled(1.0 / std::sqrt(d)), name + ".scaled_t");
  return g.add_node(OpKind::kSoftmax, {scaled}, Attrs::softmax(false), name + ".p_t");
}

// out = v^T p [H, D, S], as the permuted transpose (p^T v)^T: the same dot products, without
// transposing p^T.
graph::Graph attention_graph(int heads, int s, int d) {
  graph::Graph g;
  const int q = g.add_input("q", {heads, s, d});
  const int k = g.add_input("k", {heads, s, d});
  const int v = g.add_input("v", {heads, s, d});
  const int pt = attention_probs_t(g, q, k, d, "attn");
  const int ot =
      g.add_node(OpKind::kBatchMatMul, {pt, v}, Attrs::batch_matmul(false, false), "out_t");
  g.add_node(OpKind::kPermute, {ot}, Attrs::permute({0, 2, 1}), "out");
  return g;
}

// x W + b for x [rows, in], W [in, out], b [out].
int linear(graph::Graph& g, int x, int in, int out, const std::string& name) {
  const int w = g.add_input(name + ".w", {in, out});
  const int b = g.add_input(name + ".b", {out});
  const int xw = g.add_node(OpKind::kMatMul, {x, w}, {}, name + ".xw");
  return g.add_node(OpKind::kAdd, {xw, b}, {}, name);
}

// [S, H * Dh] -> [H, S, Dh] and back.
int split_heads(graph::Graph& g, int x, int s, int heads, const std::string& name) {
  const int r =
      g.add_node(OpKind::kReshape, {x}, Attrs::reshape({s, heads, kHeadWidth}), name + ".split");
  return g.add_node(OpKind::kPermute, {r}, Attrs::permute({1, 0, 2}), name + ".heads");
}
int merge_heads(graph::Graph& g, int x, int s, int heads, const std::string& name) {
  const int p = g.add_node(OpKind::kPermute, {x}, Attrs::permute({1, 0, 2}), name + ".merge");
  return g.add_node(OpKind::kReshape, {p}, Attrs::reshape({s, heads * kHeadWidth}), name);
}

// One encoder block on x [S, D] with D / 64 heads: q, k, v = three Linear(D, D); per head
// out_h = v_h^T p_h (computed as its transpose p_h^T v_h, the same dot products), the heads
// side by side as a [S, D]; r = LayerNorm(W_o a + b_o + x); f = ReLU(Linear(D, 4D)(r));
// out = LayerNorm(Linear(4D, D)(f) + r).
graph::Graph bert_graph(int d) {
  const int s = kBertSequence, heads = d / kHeadWidth;
  graph::Graph g;
  const int x = g.add_input("x", {s, d});
  const int q = split_heads(g, linear(g, x, d, d, "q"), s, heads, "q");
  const int k = split_heads(g, linear(g, x, d, d, "k"), s, heads, "k");
  const int v = split_heads(g, linear(g, x, d, d, "v"), s, heads, "v");
  const int pt = attention_probs_t(g, q, k, kHeadWidth, "attn");
  const int at =
      g.add_node(OpKind::kBatchMatMul, {pt, v}, Attrs::batch_matmul(false, false), "attn.out_t");
  const int a = merge_heads(g, at, s, heads, "attn.a");
  const int o = g.add_node(OpKind::kAdd, {linear(g, a, d, d, "o"), x}, {}, "o.residual");
  const int r = layer_norm(g, o, d, "ln1");
  const int f = g.add_node(OpKind::kRelu, {linear(g, r, d, 4 * d, "ff1")}, {}, "ff1.relu");
  const int y = g.add_node(OpKind::kAdd, {linear(g, f, 4 * d, d, "ff2"), r}, {}, "ff2.residual");
  layer_norm(g, y, d, "ln2");
  return g;
}

// Seed of the ResNet rows' weights (the inputs have the run's seed).
constexpr uint64_t kResNetWeightSeed = 0;

// dims {depth} or {depth, image, width}: batch 1, torchvision's initial weights and statistics,
// batch normalisation folded.
graph::Graph resnet_graph(const std::vector<int>& d) {
  graph::ResNetSpec spec{.depth = d[0]};
  if (d.size() == 3) {
    spec.image = d[1];
    spec.width = d[2];
  }
  const graph::Model m = graph::build_resnet(spec, 1, graph::BatchNormMode::kEval);
  return graph::resnet_folded_graph(spec, 1, m, graph::init_resnet_params(m, kResNetWeightSeed),
                                    graph::initial_resnet_state(m));
}

int64_t elements(const graph::Graph& g, int value) {
  return graph::num_elements(g.value(value).shape);
}

// The node's matrix-product MACs and its element operations that are not MACs (docs/suite.md).
Workload node_work(const graph::Graph& g, const graph::Node& n) {
  const graph::Shape& out = g.value(n.output).shape;
  const int64_t size = graph::num_elements(out);
  const int64_t last = out.empty() ? 1 : out.back();
  switch (n.op) {
    case OpKind::kMatMul:
      return {.macs = size * g.value(n.inputs.at(0)).shape[1]};
    case OpKind::kConv2D: {  // every output element sums KH x KW x Cin products
      const graph::Shape& w = g.value(n.inputs.at(1)).shape;
      return {.macs = size * w[0] * w[1] * w[2]};
    }
    case OpKind::kBatchMatMul: {
      const graph::Shape& a = g.value(n.inputs.at(0)).shape;
      const int64_t k = n.attrs.transpose_a ? a[a.size() - 2] : a.back();
      return {.macs = size * k};
    }
    case OpKind::kAdd:
    case OpKind::kRelu:
    case OpKind::kScale:
      return {.vector_ops = size};
    case OpKind::kMaxPool2D:  // the window's K x K elements compared per output element
      return {.vector_ops = size * n.attrs.kernel * n.attrs.kernel};
    case OpKind::kSumTo:  // one add per input element
      return {.vector_ops = elements(g, n.inputs.at(0))};
    case OpKind::kLayerNorm:  // per element: sum, x - mean, square, sum, * r, * gain, + bias;
                              // per row: mean, var, + eps, rsqrt
      return {.vector_ops = 7 * size + 4 * (size / last)};
    case OpKind::kSoftmax:  // per element: max, x - m, exp, sum, * (1 / z); per row: 1 / z
      return {.vector_ops = 5 * size + size / last};
    case OpKind::kReshape:
    case OpKind::kPermute:
    case OpKind::kPad:  // data movement
      return {};
    default:
      throw Error("suite", "no workload figures for op '" + std::string(graph::op_name(n.op)) +
                               "' (node '" + g.value(n.output).name + "')");
  }
}

}  // namespace

std::optional<std::string> unsupported_reason(const Row& row) {
  switch (row.kind) {
    case RowKind::kGemm:
    case RowKind::kConv:
    case RowKind::kLayerNorm:
    case RowKind::kSoftmax:
    case RowKind::kAttention:
      return std::nullopt;
    case RowKind::kBert:
      if (row.dims[0] % kHeadWidth != 0)
        return "a bert block's width " + std::to_string(row.dims[0]) +
               " is not a multiple of its head width " + std::to_string(kHeadWidth);
      return std::nullopt;
    case RowKind::kResNet:
      return std::nullopt;
  }
  return "unknown row kind";
}

graph::Graph row_graph(const Row& row) {
  if (const auto why = unsupported_reason(row)) throw Error(row.name(), *why);
  const std::vector<int>& d = row.dims;
  switch (row.kind) {
    case RowKind::kGemm:
      return gemm_graph(d[0]);
    case RowKind::kConv:
      return conv_graph(d);
    case RowKind::kLayerNorm:
      return layer_norm_graph(d[0], d[1]);
    case RowKind::kSoftmax:
      return softmax_graph(d[0], d[1]);
    case RowKind::kAttention:
      return attention_graph(d[0], d[1], d[2]);
    case RowKind::kBert:
      return bert_graph(d[0]);
    case RowKind::kResNet:
      return resnet_graph(d);
  }
  throw Error(row.name(), "no graph for this row");
}

Workload graph_workload(const graph::Graph& g) {
  Workload w;
  int64_t elements_moved = 0;
  for (int v : g.inputs()) elements_moved += elements(g, v);
  for (int v : g.constants()) elements_moved += elements(g, v);
  for (const graph::Node& n : g.nodes()) {
    const Workload nw = node_work(g, n);
    w.macs += nw.macs;
    w.vector_ops += nw.vector_ops;
  }
  elements_moved += elements(g, g.nodes().back().output);
  w.hbm_bytes = 4 * elements_moved;
  return w;
}

}  // namespace tessera::suite
