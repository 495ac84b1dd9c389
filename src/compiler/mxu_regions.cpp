#include "compiler/mxu_regions.h"

#include <vector>

namespace tessera::compiler {

using graph::OpKind;

namespace {

// A weight: a parameter, or a constant the graph holds (its name names the layer as well).
bool is_param(const graph::Graph& g, int v) {
  return g.value(v).kind == graph::ValueKind::kParam || g.value(v).kind == graph::ValueKind::kConst;
}

std::string layer_of_param(const graph::Graph& g, int w) {
  const std::string& name = g.value(w).name;
  const size_t dot = name.rfind('.');
  return dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
}

// The input of v's producer if that is a transpose, else -1.
int transposed(const graph::Graph& g, int v) {
  const int p = g.value(v).producer;
  return p >= 0 && g.node(p).op == OpKind::kTranspose ? g.node(p).inputs[0] : -1;
}

// The layer of the forward node of kind `op` whose first input is x and second a parameter.
std::string forward_layer(const graph::Graph& g, OpKind op, int x, const std::string& fallback) {
  for (const graph::Node& f : g.nodes())
    if (f.op == op && f.inputs.size() == 2 && f.inputs[0] == x && is_param(g, f.inputs[1]))
      return layer_of_param(g, f.inputs[1]);
  return fallback;
}

// Whether v depends on the loss gradient's seed (a ones_like node): a backward value.
bool is_gradient(const graph::Graph& g, int v) {
  std::vector<char> seen(g.values().size(), 0);
  std::vector<int> todo{v};
  while (!todo.empty()) {
    const int at = todo.back();
    todo.pop_back();
    if (seen[static_cast<size_t>(at)] != 0) continue;
    seen[static_cast<size_t>(at)] = 1;
    const int p = g.value(at).producer;
    if (p < 0) continue;
    if (g.node(p).op == OpKind::kOnesLike) return true;
    for (int in : g.node(p).inputs) todo.push_back(in);
  }
  return false;
}

// The role of an attention product (a batched matmul).
MxuRole attention_role(const graph::Graph& g, const graph::Node& n) {
  const bool grad_a = is_gradient(g, n.inputs[0]);
  const bool grad_b = is_gradient(g, n.inputs[1]);
  const int forward = grad_a ? n.inputs[1] : n.inputs[0];
  const std::string& name = g.value(forward).name;
  const size_t dot = name.rfind('.');
  std::string layer = dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
  if (layer.empty()) layer = g.value(n.output).name;
  return MxuRole{layer, grad_a || grad_b ? MxuPhase::kInputGrad : MxuPhase::kForward,
                 MxuLayerKind::kAttention};
}

}  // namespace

const char* to_string(MxuLayerKind kind) {
  switch (kind) {
    case MxuLayerKind::kDense:
      return "dense";
    case MxuLayerKind::kConv:
      return "conv";
    case MxuLayerKind::kAttention:
      return "attention";
  }
  return "?";
}

const char* to_string(MxuPhase phase) {
  switch (phase) {
    case MxuPhase::kForward:
      return "forward";
    case MxuPhase::kInputGrad:
      return "input_grad";
    case MxuPhase::kWeightGrad:
      return "weight_grad";
  }
  return "?";
}

std::optional<MxuRole> mxu_role(const graph::Graph& g, const graph::Node& n) {
  const std::string& own = g.value(n.output).name;
  auto weight_layer = [&](int w) { return is_param(g, w) ? layer_of_param(g, w) : own; };
  switch (n.op) {
    case OpKind::kMatMul: {
      const int wt = transposed(g, n.inputs[1]);
      if (wt >= 0) return MxuRole{weight_layer(wt), MxuPhase::kInputGrad};
      const int xt = transposed(g, n.inputs[0]);
      if (xt >= 0)
        return MxuRole{forward_layer(g, OpKind::kMatMul, xt, own), MxuPhase::kWeightGrad};
      return MxuRole{weight_layer(n.inputs[1]), MxuPhase::kForward};
    }
    case OpKind::kConv2D:
      return MxuRole{weight_layer(n.inputs[1]), MxuPhase::kForward, MxuLayerKind::kConv};
    case OpKind::kConv2DInputGrad:
      return MxuRole{weight_layer(n.inputs[1]), MxuPhase::kInputGrad, MxuLayerKind::kConv};
    case OpKind::kConv2DWeightGrad:
      return MxuRole{forward_layer(g, OpKind::kConv2D, n.inputs[0], own), MxuPhase::kWeightGrad,
                     MxuLayerKind::kConv};
    case OpKind::kBatchMatMul:
      return attention_role(g, n);
    default:
      return std::nullopt;
  }
}

}  // namespace tessera::compiler
