// Host kernels of the elementwise math ops (ops.def: exp .. erf) and of broadcast / sum_to, for
// double and float storage.
//
// Arithmetic: every unary op is one call of the C library function in the storage type (expf /
// exp, logf, sqrtf, tanhf, erff; sigmoid = 1 / (1 + exp(-x)) with each step rounded; reciprocal =
// 1 / x), in every numerics mode: these ops have no tensor-core lowering yet, so kChip is the
// same as kF32.
//   broadcast: y[i] = x[j] where j drops the broadcast dims of i (x right-aligned to y).
//   sum_to:    y = 0; for x's elements i ascending: y[j(i)] += x[i] (the adjoint of broadcast).
#pragma once

#include <cstdint>
#include <vector>

#include "graph/ops.h"

namespace tessera::graph::kernels {

// y = op(x) for op one of kExp, kLog, kSqrt, kReciprocal, kSigmoid, kTanh, kErf.
template <typename T>
void unary(OpKind op, const T* x, T* y, long n);

// x of shape `small` broadcast to `big` (y), and its adjoint (x of shape `big` summed to
// `small`).
template <typename T>
void broadcast(const T* x, T* y, const std::vector<int64_t>& small,
               const std::vector<int64_t>& big);
template <typename T>
void sum_to(const T* x, T* y, const std::vector<int64_t>& big, const std::vector<int64_t>& small);

}  // namespace tessera::graph::kernels
