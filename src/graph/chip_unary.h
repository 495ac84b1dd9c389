// Chip numerics of the element-wise math ops (ops.def: exp .. erf): the values the tensor-core
// kernels (compiler/kernels_unary.h) compute, bit for bit, and the host executor's kChip mode.
//   exp, log, sqrt, reciprocal, tanh   one EUP function each (numerics/eup.h)
//   sigmoid                            eup_rcp(1 + eup_exp(-x)), the sum rounded to fp32
//   erf                                Abramowitz & Stegun 7.1.26 (absolute error <= 1.5e-7 in
//                                      exact arithmetic) on a = |x|, every step one fp32 rounding,
//                                      no fused multiply-add:
//                                        t = eup_rcp(1 + p a)
//                                        q = ((((a5 t + a4) t + a3) t + a2) t + a1) t
//                                        y = 1 - q eup_exp(-(a a))
//                                      and the result |y| with the sign of x (erf is odd).
#pragma once

#include <array>

#include "graph/ops.h"

namespace tessera::graph::kernels {

// Abramowitz & Stegun 7.1.26's p and a1..a5, as fp32.
inline constexpr float kErfP = 0.3275911f;
inline constexpr std::array<float, 5> kErfA = {0.254829592f, -0.284496736f, 1.421413741f,
                                               -1.453152027f, 1.061405429f};

// y = op(x) in chip numerics for op one of kExp, kLog, kSqrt, kReciprocal, kSigmoid, kTanh, kErf.
float chip_unary(OpKind op, float x);
void chip_unary(OpKind op, const float* x, float* y, long n);

}  // namespace tessera::graph::kernels
