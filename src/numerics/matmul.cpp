// Kernel: register-blocked 8 rows x 16 columns (16 AVX2 accumulators), k innermost and strictly
// ascending, so each output follows exactly the fma chain of the contract in matmul.h.
// The unroll pragmas let GCC keep the 16 accumulators in registers (without them it spills them
// to the stack every k step, at half the speed).
#include "numerics/matmul.h"

#include <cmath>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tessera::numerics {

void mxu_matmul_accumulate_reference(const float* a, int lda, const float* w, int ldw, float* acc,
                                     int ldc, int M, int K, int N) {
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      float s = acc[m * ldc + n];
      for (int k = 0; k < K; ++k) s = std::fma(a[m * lda + k], w[k * ldw + n], s);
      acc[m * ldc + n] = s;
    }
}

#if defined(__x86_64__)
namespace {

// One block of `rows` (<= 8) x 16 columns; fixed-trip loops over `rows` unroll into registers.
template <int Rows>
__attribute__((target("avx2,fma"))) void block_avx2(const float* a, int lda, const float* w,
                                                      int ldw, float* acc, int ldc, int K) {
  __m256 c0[Rows], c1[Rows];
#pragma GCC unroll 8
  for (int r = 0; r < Rows; ++r) {
    c0[r] = _mm256_loadu_ps(acc + r * ldc);
    c1[r] = _mm256_loadu_ps(acc + r * ldc + 8);
  }
  for (int k = 0; k < K; ++k) {
    const __m256 w0 = _mm256_loadu_ps(w + k * ldw);
    const __m256 w1 = _mm256_loadu_ps(w + k * ldw + 8);
#pragma GCC unroll 8
    for (int r = 0; r < Rows; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r * lda + k);
      c0[r] = _mm256_fmadd_ps(av, w0, c0[r]);
      c1[r] = _mm256_fmadd_ps(av, w1, c1[r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < Rows; ++r) {
    _mm256_storeu_ps(acc + r * ldc, c0[r]);
    _mm256_storeu_ps(acc + r * ldc + 8, c1[r]);
  }
}

using BlockFn = void (*)(const float*, int, const float*, int, float*, int, int);
constexpr BlockFn kBlocks[9] = {nullptr,        block_avx2<1>, block_avx2<2>,
                                block_avx2<3>,  block_avx2<4>, block_avx2<5>,
                                block_avx2<6>,  block_avx2<7>, block_avx2<8>};

bool host_has_avx2_fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

}  // namespace
#endif

void mxu_matmul_accumulate(const float* a, int lda, const float* w, int ldw, float* acc, int ldc,
                           int M, int K, int N) {
#if defined(__x86_64__)
  if (host_has_avx2_fma()) {
    const int n_vec = N - N % 16;
    for (int m0 = 0; m0 < M; m0 += 8) {
      const int rows = M - m0 < 8 ? M - m0 : 8;
      for (int n0 = 0; n0 < n_vec; n0 += 16)
        kBlocks[rows](a + m0 * lda, lda, w + n0, ldw, acc + m0 * ldc + n0, ldc, K);
    }
    if (n_vec < N)
      mxu_matmul_accumulate_reference(a, lda, w + n_vec, ldw, acc + n_vec, ldc, M, K, N - n_vec);
    return;
  }
#endif
  mxu_matmul_accumulate_reference(a, lda, w, ldw, acc, ldc, M, K, N);
}

}  // namespace tessera::numerics
