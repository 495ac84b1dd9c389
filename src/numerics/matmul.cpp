// Kernel: register-blocked 4 rows x 24 columns (12 AVX2 accumulators), k innermost and strictly
// ascending, so each output follows exactly the fma chain of the contract in matmul.h.
// 12 accumulators + 3 weight vectors + 1 broadcast fill AVX2's 16 ymm registers exactly; the
// earlier 8 x 16 block needed 19 and spilled to the stack every k step. The unroll pragmas keep
// the small arrays in registers.
#include "numerics/matmul.h"

#include <cmath>

#include "numerics/host_cpu.h"

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

// One block of `Rows` (<= 4) rows x `Vecs` (<= 3) vectors of 8 columns. 4 x 3 keeps 12
// accumulators, 3 weight vectors and 1 broadcast in AVX2's 16 ymm registers (no spills); the k
// loop stays strictly ascending for every output, as the contract requires.
template <int Rows, int Vecs>
__attribute__((target("avx2,fma"))) void block_avx2(const float* a, int lda, const float* w,
                                                      int ldw, float* acc, int ldc, int K) {
  __m256 c[Rows][Vecs];
#pragma GCC unroll 4
  for (int r = 0; r < Rows; ++r)
#pragma GCC unroll 3
    for (int v = 0; v < Vecs; ++v) c[r][v] = _mm256_loadu_ps(acc + r * ldc + 8 * v);
  for (int k = 0; k < K; ++k) {
    __m256 wv[Vecs];
#pragma GCC unroll 3
    for (int v = 0; v < Vecs; ++v) wv[v] = _mm256_loadu_ps(w + k * ldw + 8 * v);
#pragma GCC unroll 4
    for (int r = 0; r < Rows; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r * lda + k);
#pragma GCC unroll 3
      for (int v = 0; v < Vecs; ++v) c[r][v] = _mm256_fmadd_ps(av, wv[v], c[r][v]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < Rows; ++r)
#pragma GCC unroll 3
    for (int v = 0; v < Vecs; ++v) _mm256_storeu_ps(acc + r * ldc + 8 * v, c[r][v]);
}

using BlockFn = void (*)(const float*, int, const float*, int, float*, int, int);
// kBlocks[rows][vecs]: rows 1..4, vecs 1..3.
constexpr BlockFn kBlocks[5][4] = {
    {nullptr, nullptr, nullptr, nullptr},
    {nullptr, block_avx2<1, 1>, block_avx2<1, 2>, block_avx2<1, 3>},
    {nullptr, block_avx2<2, 1>, block_avx2<2, 2>, block_avx2<2, 3>},
    {nullptr, block_avx2<3, 1>, block_avx2<3, 2>, block_avx2<3, 3>},
    {nullptr, block_avx2<4, 1>, block_avx2<4, 2>, block_avx2<4, 3>}};

// Vectors of the next block when `left` vectors remain: 3 while that leaves no lone vector, and
// 4 as 2 + 2. A one-vector block keeps only `rows` FMA chains in flight, too few to hide the FMA
// latency, so 16 vectors (128 columns) run as 3+3+3+3+2+2 rather than 3+3+3+3+3+1.
int block_vecs(int left) {
  if (left == 4) return 2;
  return left < 3 ? left : 3;
}

}  // namespace
#endif

void mxu_matmul_accumulate(const float* a, int lda, const float* w, int ldw, float* acc, int ldc,
                           int M, int K, int N) {
#if defined(__x86_64__)
  if (host_has_avx2_fma()) {
    const int n_vec = N - N % 8;
    for (int m0 = 0; m0 < M; m0 += 4) {
      const int rows = M - m0 < 4 ? M - m0 : 4;
      for (int n0 = 0; n0 < n_vec;) {
        const int left = (n_vec - n0) / 8;
        const int vecs = block_vecs(left);
        kBlocks[rows][vecs](a + m0 * lda, lda, w + n0, ldw, acc + m0 * ldc + n0, ldc, K);
        n0 += 8 * vecs;
      }
    }
    if (n_vec < N)
      mxu_matmul_accumulate_reference(a, lda, w + n_vec, ldw, acc + n_vec, ldc, M, K, N - n_vec);
    return;
  }
#endif
  mxu_matmul_accumulate_reference(a, lda, w, ldw, acc, ldc, M, K, N);
}

}  // namespace tessera::numerics
