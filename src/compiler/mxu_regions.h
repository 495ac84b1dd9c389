// MXU regions: which layer and which training phase each matrix-unit kernel of a compiled program
// belongs to. Metadata, not instructions: the compiler records, per graph node that runs on the
// MXU, the range of bundles its kernel occupies; the runtime attributes the MXU's statistics by the
// pc of the bundle that issued each mmul (core/mxu_attribution.h, runtime/pe_attribution.h).
//
// Roles (graph/autodiff.cpp's rules):
//   matmul(x, W)                 forward       layer of W
//   matmul(dy, transpose(W))     input_grad    layer of W
//   matmul(transpose(x), dy)     weight_grad   layer of the forward matmul(x, W)
//   conv2d(x, W)                 forward       layer of W
//   conv2d_input_grad(dy, W)     input_grad    layer of W
//   conv2d_weight_grad(x, dy)    weight_grad   layer of the forward conv2d(x, W)
//   batch_matmul(a, b)           forward       attention layer of a
//   batch_matmul(dy, ..)         input_grad    attention layer of the operand that is not a
//   gradient
// The layer of a parameter W named "<layer>.<suffix>" is "<layer>" (graph/model.cpp names the
// weights "dense1.w", "conv2.w", ...); a W that is not a parameter, or a weight gradient whose
// forward node is not found, gives the node's output name. Batched products are multi-head
// attention's (QK^T and PV, graph/gpt_model.h): their layer is the operand's name up to its last
// '.' ("block0.attn.q" -> "block0.attn"); a product is a gradient when an operand depends on the
// loss gradient's seed (ones_like), and attention has no weights, so both of its gradients are
// input gradients.
//
// Kinds: matmul -> dense, conv2d and its gradients -> conv, batch_matmul -> attention.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "graph/graph.h"

namespace tessera::compiler {

enum class MxuPhase : uint8_t { kForward, kInputGrad, kWeightGrad };
inline constexpr int kNumMxuPhases = 3;

// "forward", "input_grad", "weight_grad".
const char* to_string(MxuPhase phase);

enum class MxuLayerKind : uint8_t { kDense, kConv, kAttention };
inline constexpr int kNumMxuLayerKinds = 3;

// "dense", "conv", "attention".
const char* to_string(MxuLayerKind kind);

struct MxuRole {
  std::string layer;
  MxuPhase phase = MxuPhase::kForward;
  MxuLayerKind kind = MxuLayerKind::kDense;
};

// Bundles [first_pc, end_pc) of the compiled program hold the MXU kernel of graph node `node`.
struct MxuRegion {
  int64_t first_pc = 0, end_pc = 0;
  std::string node;  // the node's output value name
  MxuRole role;
};

// The role of node n if it runs on the MXU, else nullopt.
std::optional<MxuRole> mxu_role(const graph::Graph& g, const graph::Node& n);

}  // namespace tessera::compiler
