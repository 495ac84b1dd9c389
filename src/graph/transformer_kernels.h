// Host kernels of the transformer ops (ops.def: embedding .. dropout), for double and float
// storage, in the numerics modes of kernels.h. A "row" is one run of the last dimension.
//
// Arithmetic, per row of D (or T) values; every operation is one rounding in the storage type
// (no fused multiply-add), f32 constants are the float nearest the real one:
//   embedding:       y[i, :] = table[ids[i], :] (exact). Ids outside [0, V) are an error.
//   embedding_grad:  out = 0; for rows i ascending: out[ids[i], :] += dy[i, :].
//   layer_norm:      mean = sum(x) * (1/D); c = x - mean; var = sum(c * c) * (1/D);
//                    r = 1 / sqrt(var + eps); xhat = c * r; y = xhat * gain + bias
//                    (chip: sums are numerics::tree_sum, r = numerics::eup_rsqrt; host modes:
//                    sums in index order, r = 1 / sqrt in the storage type).
//   layer_norm_grad: g = dy * gain; a = sum(g) * (1/D); b = sum(g * xhat) * (1/D);
//                    dx = (g - a - xhat * b) * r   (sums and r as layer_norm).
//   layer_norm_gain_grad: the column sums (kernels.h reduce_rows) of dy * xhat over the rows.
//   gelu:            u = x + 0.044715 * (x * x * x); t = tanh(sqrt(2/pi) * u);
//                    y = (0.5 * x) * (1 + t)   (chip: tanh is numerics::eup_tanh).
//   gelu_grad:       du = sqrt(2/pi) * (1 + 0.134145 * (x * x)); s = 1 - t * t;
//                    dx = dy * ((0.5 * (1 + t)) + (0.5 * x) * (s * du)).
//   softmax:         a masked element (causal: column t > s + T - S of row s of the last two
//                    dims) gives 0; over the others m = max, e = exp(x - m), z = sum(e),
//                    y = e * (1 / z) (chip: tree_max, eup_exp, tree_sum over the whole row with
//                    masked e = 0, eup_rcp; host modes: index order and e / z).
//   softmax_grad:    dx = y * (dy - sum(dy * y))   (chip: tree_sum; host: index order).
//   batch_matmul:    per batch index, operands transposed to [M, K] and [K, N] first, then the
//                    Matmul of kernels.h (chip: bf16 operands, MXU accumulation, k ascending).
//   mul, scale:      one product per element; scale's factor is rounded to the storage type.
//   dropout:         word i of the RNG unit's stream of `seed` (numerics/philox.h, position 0
//                    at element 0, row-major) keeps element i when word >= threshold, threshold =
//                    round(rate * 2^32); kept: x * (1 / (1 - rate)) (the factor rounded to the
//                    storage type), dropped: 0. Rate 0 keeps every element unchanged.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/kernels.h"

namespace tessera::graph::kernels {

// Error ("embedding": the id, its position i and V) unless 0 <= id < V.
void check_id(int32_t id, int V, long i);

template <typename T>
void embedding(const T* table, const int32_t* ids, T* y, long n, int V, int D);
template <typename T>
void embedding_grad(const T* dy, const int32_t* ids, T* out, long n, int V, int D);

template <typename T>
void layer_norm(const T* x, const T* gain, const T* bias, T* y, long rows, int D, double eps,
                Numerics mode);
template <typename T>
void layer_norm_grad(const T* dy, const T* x, const T* gain, T* dx, long rows, int D, double eps,
                     Numerics mode);
template <typename T>
void layer_norm_gain_grad(const T* dy, const T* x, T* out, long rows, int D, double eps,
                          Numerics mode);

template <typename T>
void gelu(const T* x, T* y, long n, Numerics mode);
template <typename T>
void gelu_grad(const T* dy, const T* x, T* dx, long n, Numerics mode);

// x holds `batches` matrices of S x T (rows of T); causal masks column t > s + T - S.
template <typename T>
void softmax(const T* x, T* y, long batches, int S, int T_, bool causal, Numerics mode);
template <typename T>
void softmax_grad(const T* dy, const T* y, T* dx, long rows, int T_, Numerics mode);

// c[b] = op(a[b]) x op(b[b]) for `batches` matrices; op(a) is [M, K], op(b) is [K, N].
template <typename T>
void batch_matmul(const T* a, const T* b, T* c, long batches, int M, int K, int N, bool transpose_a,
                  bool transpose_b, const Matmul& mm);

// y = x with dims reordered: y's dim i is x's dim perm[i] (x's shape `dims`).
template <typename T>
void permute(const T* x, T* y, const std::vector<int64_t>& dims, const std::vector<int64_t>& perm);

template <typename T>
void mul_broadcast(const T* a, const T* b, T* out, long n, long nb);
template <typename T>
void scale(const T* x, T* y, long n, double factor);
template <typename T>
void dropout(const T* x, T* y, long n, double rate, uint32_t seed);

}  // namespace tessera::graph::kernels
