// Host kernels of batch normalisation's per-channel ops (ops.def: batch_norm .. batch_norm_grad)
// for float and double storage, in the numerics modes of kernels.h. x is [rows, C] (every leading
// dim folded into rows), the vectors [C]. Every operation is one rounding in the storage type (no
// fused multiply-add), so the tensor core's kernels (compiler/lower_batch_norm.cpp) give the same
// float values:
//   batch_norm:      a = gamma * inv_sd; y = ((x - mean) * a) + beta.
//   channel_squares: the sum over the rows of t = (x - mean) * (x - mean),
//   channel_dot:     of t = u * (x - mean): in chip numerics in reduce_rows' order
//                    (numerics::column_sum over the terms: kColumnSumSublanes partial sums of
//                    every S-th row, then their pairwise tree), else row by row ascending.
//   batch_norm_grad: dx = ((dy * k_dy) + ((x - mean) * k_x)) + k.
#pragma once

#include "graph/kernels.h"

namespace tessera::graph::kernels {

template <typename T>
void batch_norm(const T* x, const T* mean, const T* inv_sd, const T* gamma, const T* beta, T* y,
                long rows, int C);
template <typename T>
void channel_squares(const T* x, const T* mean, T* out, long rows, int C, Numerics mode);
template <typename T>
void channel_dot(const T* u, const T* x, const T* mean, T* out, long rows, int C, Numerics mode);
template <typename T>
void batch_norm_grad(const T* dy, const T* x, const T* mean, const T* k_dy, const T* k_x,
                     const T* k, T* dx, long rows, int C);

}  // namespace tessera::graph::kernels
