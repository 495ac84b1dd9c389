// Graph-IR op kinds and their static metadata, generated from ops.def (the single op table).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tessera::graph {

enum class OpKind : uint8_t {
#define OP(name, mnemonic, arity, differentiable, summary) k##name,
#include "graph/ops.def"
#undef OP
};

struct OpInfo {
  OpKind kind;
  std::string_view mnemonic;
  int arity;
  bool differentiable;
  std::string_view summary;
};

inline constexpr std::array kOpTable = {
#define OP(name, mnemonic, arity, differentiable, summary) \
  OpInfo{OpKind::k##name, mnemonic, arity, differentiable, summary},
#include "graph/ops.def"
#undef OP
};

// Update every switch over OpKind (shape_inference.cpp, autodiff.cpp, executor.cpp) when this
// changes.
inline constexpr int kNumOps = 52;
static_assert(kOpTable.size() == kNumOps, "ops.def changed: update kNumOps and every op switch");

constexpr const OpInfo& op_info(OpKind k) {
  return kOpTable[static_cast<size_t>(k)];
}
constexpr std::string_view op_name(OpKind k) {
  return op_info(k).mnemonic;
}
std::optional<OpKind> op_from_mnemonic(std::string_view mnemonic);

// The unary element-wise ops: y = f(x) element by element, x's shape, one host kernel
// (kernels::unary) and one autodiff rule (dy * f'(x)). Shape inference, the executor and autodiff
// ask this instead of listing them.
constexpr bool is_unary_elementwise(OpKind k) {
  switch (k) {
    case OpKind::kExp:
    case OpKind::kLog:
    case OpKind::kSqrt:
    case OpKind::kReciprocal:
    case OpKind::kSigmoid:
    case OpKind::kTanh:
    case OpKind::kErf:
      return true;
    default:
      return false;
  }
}

}  // namespace tessera::graph
