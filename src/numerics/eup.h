// The extended unary pipeline's functions (EUP: exp, log, reciprocal, rsqrt, sqrt, tanh), defined
// once for the simulator and every host reference.
//
// Definition (bit-exact contract): the fp32 input is widened exactly to double, the function is
// evaluated in double with the C library (std::exp, std::log, 1.0 / x, 1.0 / std::sqrt(x),
// std::sqrt, std::tanh), and the double result is rounded ONCE to fp32 (round to nearest even).
//   * sqrt and rcp are therefore correctly rounded fp32 results (double carries > 2*24+2 bits, so
//     the double rounding is innocuous); exp, log, rsqrt and tanh are correctly rounded except in
//     the rare case where the double result lies within 2^-29 relative of an fp32 tie.
//   * IEEE special values follow the C library: exp(-inf) = +0, exp(+inf) = +inf, log(0) = -inf,
//     log(x < 0) = NaN, rcp(+-0) = +-inf, rsqrt(+0) = +inf, rsqrt(-0) = -inf, sqrt(-x) = NaN,
//     NaN in -> NaN out (quiet). Subnormal inputs and outputs are kept (no FTZ/DAZ).
// Determinism: identical on every host whose libm gives the same double results (glibc's exp,
// log and tanh are the same code on every x86-64 host); sqrt and division are IEEE-exact.
#pragma once

#include <cstdint>

namespace tessera::numerics {

enum class EupFunc : uint8_t { Exp, Log, Rcp, Rsqrt, Sqrt, Tanh };

float eup_exp(float x);
float eup_log(float x);
float eup_rcp(float x);
float eup_rsqrt(float x);
float eup_sqrt(float x);
float eup_tanh(float x);

// Applies `f` to n values (in may equal out).
void eup_apply(EupFunc f, const float* in, float* out, long n);

}  // namespace tessera::numerics
