#include "compiler/mxu_regions.h"

namespace tessera::compiler {

using graph::OpKind;

namespace {

bool is_param(const graph::Graph& g, int v) {
  return g.value(v).kind == graph::ValueKind::kParam;
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

}  // namespace

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
      return MxuRole{weight_layer(n.inputs[1]), MxuPhase::kForward};
    case OpKind::kConv2DInputGrad:
      return MxuRole{weight_layer(n.inputs[1]), MxuPhase::kInputGrad};
    case OpKind::kConv2DWeightGrad:
      return MxuRole{forward_layer(g, OpKind::kConv2D, n.inputs[0], own), MxuPhase::kWeightGrad};
    default:
      return std::nullopt;
  }
}

}  // namespace tessera::compiler
