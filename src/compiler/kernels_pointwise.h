// Element-wise kernels of the transformer ops on the vector unit, the EUP (tanh) and the RNG unit
// (dropout masks), streamed as compiler/kernels.h's emit_stream, with exactly the arithmetic of
// the host reference's chip numerics (graph/transformer_kernels.h): every step one fp32 rounding,
// no fused multiply-add, constants the host's f32 values.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/codegen.h"

namespace tessera::compiler {

// y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) over n elements.
void emit_gelu(Codegen& cg, const std::string& name, int64_t x, int64_t y, int64_t n);
// dx = dy * gelu'(x).
void emit_gelu_grad(Codegen& cg, const std::string& name, int64_t dy, int64_t x, int64_t dx,
                    int64_t n);
// y = x * f32(factor).
void emit_scale(Codegen& cg, const std::string& name, int64_t x, int64_t y, int64_t n,
                double factor);
// y = x * keep / (1 - rate): keep = word i of the RNG unit's stream of `seed` >= round(rate *
// 2^32) (unsigned), the factor f32(1 / (1 - rate)); dropped elements +0.
void emit_dropout(Codegen& cg, const std::string& name, int64_t x, int64_t y, int64_t n,
                  double rate, uint32_t seed);
// HBM [dst, dst + n) = HBM [src, src + n), through vector memory.
void emit_copy(Codegen& cg, const std::string& name, int64_t src, int64_t dst, int64_t n);

}  // namespace tessera::compiler
