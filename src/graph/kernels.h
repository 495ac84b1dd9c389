// Host kernels of the reference executor, one per op family, for double and float storage.
//
// Numerics modes (executor.h):
//   kF64  double everywhere; sums in index order (k ascending, rows ascending).
//   kF32  float; matmuls through OpenBLAS cblas_sgemm (single thread) when enabled, else the
//         naive k-ascending loop; other sums in index order.
//   kChip float, the chip's arithmetic: every matmul and convolution is numerics::
//         mxu_matmul_accumulate on bf16-rounded operands starting from +0 (k ascending, see the
//         K orders below); row sums are numerics::column_sum (8 sublanes); softmax max/sum over
//         classes are numerics::tree_max / tree_sum; exp, log and reciprocal are numerics::eup_*.
//
// Convolutions are im2col + one matmul, so their K order is the im2col column order (conv2d runs
// the matmul in blocks of output rows, each row's sums those of the one matmul: conv_kernels.cpp):
//   conv2d:             K = (kh, kw, ci) ascending; M = (n, oh, ow)
//   conv2d_input_grad:  a stride-1 convolution of dy, zero-dilated by the stride and padded by
//                       KH-1-pad (KW-1-pad), with the kernel flipped and transposed
//                       (w'[kh', kw', co, ci] = w[KH-1-kh', KW-1-kw', ci, co]);
//                       K = (kh', kw', co) ascending, zero terms included
//   conv2d_weight_grad: dw[K, Co] = im2col(x)^T x dy; K order = M = (n, oh, ow) ascending
// Softmax cross-entropy, per row b of logits x[B, C] with label y:
//   m = max_c x; e_c = exp(x_c - m); s = sum_c e_c; loss_b = log(s) - (x_y - m)
//   loss = (sum_b loss_b) * f32(1/B)   (chip: column_sum over the B losses)
//   grad: g = dloss * f32(1/B); p_c = e_c * rcp(s) (host modes: e_c / s); d_c = (p_c - [c == y]) *
//   g
#pragma once

#include <cstdint>

namespace tessera::graph {

enum class Numerics : uint8_t { kF64, kF32, kChip };
const char* numerics_name(Numerics n);

namespace kernels {

struct Matmul {
  Numerics mode;
  bool use_blas;
  // c[M,N] = a[M,K] x b[K,N] (c overwritten).
  void operator()(const double* a, const double* b, double* c, int M, int K, int N) const;
  void operator()(const float* a, const float* b, float* c, int M, int K, int N) const;
  // c[M,N] = a^T x b with a stored [K,M] (same arithmetic as transposing a first; fp32 BLAS
  // reads a transposed in place).
  void transposed_a(const double* a, const double* b, double* c, int M, int K, int N) const;
  void transposed_a(const float* a, const float* b, float* c, int M, int K, int N) const;
};

struct ConvGeom {
  int n, h, w, ci;  // input
  int kh, kw, co;   // kernel
  int stride, pad;
  int oh, ow;  // output
};

template <typename T>
void add_broadcast(const T* a, const T* b, T* out, long n, long nb);
template <typename T>
void relu(const T* x, T* out, long n, Numerics mode);
template <typename T>
void relu_grad(const T* dy, const T* x, T* out, long n);
template <typename T>
void transpose(const T* x, T* out, int rows, int cols);
template <typename T>
void reduce_rows(const T* x, T* out, long rows, int cols, Numerics mode);

// loss[0] = mean softmax cross-entropy. Throws Error if a label is outside [0, C).
template <typename T>
void softmax_xent(const T* logits, const int32_t* labels, T* loss, int B, int C, Numerics mode);
template <typename T>
void softmax_xent_grad(const T* logits, const int32_t* labels, T dloss, T* out, int B, int C,
                       Numerics mode);

template <typename T>
void conv2d(const T* x, const T* w, T* y, const ConvGeom& g, const Matmul& mm);
template <typename T>
void conv2d_input_grad(const T* dy, const T* w, T* dx, const ConvGeom& g, const Matmul& mm);
template <typename T>
void conv2d_weight_grad(const T* x, const T* dy, T* dw, const ConvGeom& g, const Matmul& mm);

// Pooling geometry uses ConvGeom with kh = kw = window, co = ci, pad = 0.
template <typename T>
void maxpool2d(const T* x, T* y, const ConvGeom& g);
template <typename T>
void maxpool2d_grad(const T* dy, const T* x, T* dx, const ConvGeom& g);

}  // namespace kernels
}  // namespace tessera::graph
