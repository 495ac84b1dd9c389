// Host kernels of the elementwise math ops (ops.def: exp .. erf) and of broadcast / sum_to, for
// double and float storage.
//
// Arithmetic: every unary op is one call of the C library function in the storage type (expf /
// exp, logf, sqrtf, tanhf, erff; sigmoid = 1 / (1 + exp(-x)) with each step rounded; reciprocal =
// 1 / x) in kF32 and kF64; kChip runs graph/chip_unary.h instead.
//   broadcast: y[i] = x[j] where j drops the broadcast dims of i (x right-aligned to y).
//   sum_to:    y = 0; for x's elements i ascending: y[j(i)] += x[i] (the adjoint of broadcast).
//   slice:     y[i] = x[starts + i * steps] per dim (exact); slice_grad: 0, then dy scattered
//              to those positions; concat: a's then b's elements per index of the dims before
//              the axis (exact).
//   pad:       y = fill, then x copied to offsets starts (exact).
//   reduce_max: y[j] = -inf, then for x's elements i ascending: y[j(i)] = max(y[j(i)], x[i]) with
//              the vector unit's max (numerics::fmax_ieee: NaN wins, +0 beats -0), so an all -inf
//              group gives -inf and a NaN gives NaN, as ONNX and numpy (exact);
//              reduce_max_grad: dy[j] to the first i (row-major) of each j where x[i] == y[j], 0
//              elsewhere.
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

template <typename T>
void slice(const T* x, T* y, const std::vector<int64_t>& x_shape,
           const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
           const std::vector<int64_t>& y_shape);
template <typename T>
void slice_grad(const T* dy, T* dx, const std::vector<int64_t>& x_shape,
                const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
                const std::vector<int64_t>& y_shape);
// a [..., A, ...] and b [..., B, ...] (same dims off `axis`) -> out [..., A + B, ...].
template <typename T>
void concat(const T* a, const T* b, T* out, const std::vector<int64_t>& a_shape,
            const std::vector<int64_t>& b_shape, int axis);

template <typename T>
void pad(const T* x, T* y, const std::vector<int64_t>& x_shape, const std::vector<int64_t>& starts,
         const std::vector<int64_t>& y_shape, T fill);

// x of shape `big` reduced to `small` (which broadcasts to `big`) by max, and its gradient.
template <typename T>
void reduce_max(const T* x, T* y, const std::vector<int64_t>& big,
                const std::vector<int64_t>& small);
template <typename T>
void reduce_max_grad(const T* dy, const T* x, const T* y, T* dx, const std::vector<int64_t>& big,
                     const std::vector<int64_t>& small);

}  // namespace tessera::graph::kernels
