#include "suite/workload_graph.h"

#include "common/error.h"

namespace tessera::suite {

namespace {

graph::Graph gemm_graph(int n) {
  graph::Graph g;
  const int a = g.add_input("a", {n, n});
  const int b = g.add_input("b", {n, n});
  g.add_node(graph::OpKind::kMatMul, {a, b}, {}, "c");
  return g;
}

// dims {B, H, W, Cin, Cout, K, S, P}
graph::Graph conv_graph(const std::vector<int>& d) {
  graph::Graph g;
  const int x = g.add_input("x", {d[0], d[1], d[2], d[3]});
  const int w = g.add_input("w", {d[5], d[5], d[3], d[4]});
  g.add_node(graph::OpKind::kConv2D, {x, w}, graph::Attrs::conv(d[6], d[7]), "y");
  return g;
}

int64_t node_macs(const graph::Graph& g, const graph::Node& n) {
  const graph::Shape& out = g.value(n.output).shape;
  const graph::Shape& a = g.value(n.inputs.at(0)).shape;
  const graph::Shape& b = g.value(n.inputs.at(1)).shape;
  switch (n.op) {
    case graph::OpKind::kMatMul:
      return out[0] * out[1] * a[1];
    case graph::OpKind::kConv2D:  // every output element sums KH x KW x Cin products
      return graph::num_elements(out) * b[0] * b[1] * b[2];
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
      return std::nullopt;
    case RowKind::kLayerNorm:
      return "the compiler has no tensor-core lowering of layer_norm";
    case RowKind::kSoftmax:
      return "the compiler has no tensor-core lowering of softmax";
    case RowKind::kAttention:
      return "the compiler has no tensor-core lowering of batch_matmul, scale and softmax";
    case RowKind::kResNet:
      return "the graph IR has no batch normalisation, padded max pooling or global average "
             "pooling, and the model zoo no ResNet";
    case RowKind::kBert:
      return "the compiler has no tensor-core lowering of layer_norm, softmax and batch_matmul, "
             "and the model zoo no encoder block";
  }
  return "unknown row kind";
}

graph::Graph row_graph(const Row& row) {
  if (const auto why = unsupported_reason(row)) throw Error(row.name(), *why);
  return row.kind == RowKind::kGemm ? gemm_graph(row.dims[0]) : conv_graph(row.dims);
}

Workload graph_workload(const graph::Graph& g) {
  Workload w;
  int64_t elements = 0;
  for (int v : g.inputs()) elements += graph::num_elements(g.value(v).shape);
  for (const graph::Node& n : g.nodes()) w.macs += node_macs(g, n);
  elements += graph::num_elements(g.value(g.nodes().back().output).shape);
  w.hbm_bytes = 4 * elements;
  return w;
}

}  // namespace tessera::suite
