// Element-wise math ops of the graph IR (exp, log, sqrt, reciprocal, sigmoid, tanh, erf) on the
// EUP and the vector unit, streamed as compiler/kernels.h's emit_stream, with exactly the
// arithmetic of the host's chip numerics (graph/chip_unary.h).
#pragma once

#include <cstdint>
#include <string>

#include "compiler/codegen.h"
#include "graph/ops.h"

namespace tessera::compiler {

// y = op(x) over n elements; op one of kExp, kLog, kSqrt, kReciprocal, kSigmoid, kTanh, kErf.
void emit_unary(Codegen& cg, const std::string& name, graph::OpKind op, int64_t x, int64_t y,
                int64_t n);

}  // namespace tessera::compiler
