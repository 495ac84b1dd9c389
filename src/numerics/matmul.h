// The matrix unit's arithmetic, defined once for the simulator and every host reference.
//
// Contract (bit-exact):
//   * inputs and weights are first rounded to bf16 (numerics/bf16.h); callers pass them already
//     rounded (as fp32 values holding bf16 numbers);
//   * each product a*w is exact, and is added to the fp32 partial sum with ONE rounding (round to
//     nearest even): acc = fma(a, w, acc). (A bf16 x bf16 product has at most 16 significant bits,
//     so it is exact in fp32 except beyond fp32's exponent range; fma makes the single rounding
//     hold there too.)
//   * order: the weight-stationary systolic order. The partial sum for output (m, n) enters the top
//     of column n as +0 (or as the accumulator's previous value when accumulating) and passes the
//     PEs of rows k = 0, 1, ..., K-1 top to bottom, i.e. k strictly ascending. A K larger than the
//     array is split into tiles that continue the same chain (tile 0's rows first, then tile 1's).
//   * IEEE semantics otherwise: NaN/Inf propagate, subnormals kept (no FTZ/DAZ).
#pragma once

namespace tessera::numerics {

// acc[m*ldc + n] = fma-chain over k ascending of a[m*lda + k] * w[k*ldw + n], starting from the
// value already in acc (pass zeros for a fresh result). a: M x K, w: K x N, acc: M x N, all
// row-major fp32 holding bf16 values (a, w). Uses AVX-512 F where the host has it, else AVX2+FMA,
// else the reference; every path gives bit-identical results.
void mxu_matmul_accumulate(const float* a, int lda, const float* w, int ldw, float* acc, int ldc,
                           int M, int K, int N);

// The same contract, one element at a time, in the plainest code: the oracle for tests.
void mxu_matmul_accumulate_reference(const float* a, int lda, const float* w, int ldw, float* acc,
                                     int ldc, int M, int K, int N);

// The vector paths, for tests that compare them on one host (x86-64 only; call one only where its
// `supported` is true).
namespace detail {
bool mxu_matmul_avx512_supported();
void mxu_matmul_accumulate_avx512(const float* a, int lda, const float* w, int ldw, float* acc,
                                  int ldc, int M, int K, int N);
bool mxu_matmul_avx2_supported();
void mxu_matmul_accumulate_avx2(const float* a, int lda, const float* w, int ldw, float* acc,
                                int ldc, int M, int K, int N);
}  // namespace detail

}  // namespace tessera::numerics
