// Kernels: register-blocked rows x vectors of columns, k innermost and strictly ascending, so each
// output follows exactly the fma chain of the contract in matmul.h.
// - AVX2: 4 rows x 24 columns (12 accumulators + 3 weight vectors + 1 broadcast fill the 16 ymm
//   registers exactly; the earlier 8 x 16 block needed 19 and spilled to the stack every k step).
// - AVX-512: up to 6 rows x 64 columns (24 accumulators + 4 weight vectors + 1 broadcast of the 32
//   zmm registers), the last vector of a row masked to the columns left, so every N runs in it.
// The unroll pragmas keep the small arrays in registers.
#include "numerics/matmul.h"

#include <array>
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

// Rows x Vecs vectors of 16 columns; the last vector covers the columns of `last` (a tail mask;
// masked-off columns are neither read nor written).
template <int Rows, int Vecs>
__attribute__((target("avx512f"))) void block_avx512(const float* a, int lda, const float* w,
                                                     int ldw, float* acc, int ldc, int K,
                                                     __mmask16 last) {
  __m512 c[Rows][Vecs];
#pragma GCC unroll 6
  for (int r = 0; r < Rows; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < Vecs; ++v)
      c[r][v] =
          _mm512_maskz_loadu_ps(v == Vecs - 1 ? last : __mmask16{0xffff}, acc + r * ldc + 16 * v);
  for (int k = 0; k < K; ++k) {
    __m512 wv[Vecs];
#pragma GCC unroll 4
    for (int v = 0; v < Vecs; ++v)
      wv[v] = _mm512_maskz_loadu_ps(v == Vecs - 1 ? last : __mmask16{0xffff}, w + k * ldw + 16 * v);
#pragma GCC unroll 6
    for (int r = 0; r < Rows; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * lda + k]);
#pragma GCC unroll 4
      for (int v = 0; v < Vecs; ++v) c[r][v] = _mm512_fmadd_ps(av, wv[v], c[r][v]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < Rows; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < Vecs; ++v)
      _mm512_mask_storeu_ps(acc + r * ldc + 16 * v, v == Vecs - 1 ? last : __mmask16{0xffff},
                            c[r][v]);
}

using Block512Fn = void (*)(const float*, int, const float*, int, float*, int, int, __mmask16);
// kBlocks512[rows][vecs]: rows 1..6, vecs 1..4.
template <int Rows>
constexpr std::array<Block512Fn, 5> blocks512_row = {nullptr, block_avx512<Rows, 1>,
                                                     block_avx512<Rows, 2>, block_avx512<Rows, 3>,
                                                     block_avx512<Rows, 4>};
constexpr std::array<std::array<Block512Fn, 5>, 7> kBlocks512 = {std::array<Block512Fn, 5>{},
                                                                 blocks512_row<1>,
                                                                 blocks512_row<2>,
                                                                 blocks512_row<3>,
                                                                 blocks512_row<4>,
                                                                 blocks512_row<5>,
                                                                 blocks512_row<6>};

// The count of the next block when `left` remain, at most `most` per block: as even as possible,
// so no block is left with too few rows or vectors to keep the FMA pipes busy (8 rows: 4 + 4, not
// 6 + 2; 5 vectors: 3 + 2, not 4 + 1).
int even_share(int left, int most) {
  const int blocks = (left + most - 1) / most;
  return (left + blocks - 1) / blocks;
}

using BlockFn = void (*)(const float*, int, const float*, int, float*, int, int);
// kBlocks[rows][vecs]: rows 1..4, vecs 1..3.
constexpr BlockFn kBlocks[5][4] = {{nullptr, nullptr, nullptr, nullptr},
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

namespace detail {

bool mxu_matmul_avx512_supported() {
  return host_has_avx512f();
}

__attribute__((target("avx512f"))) void mxu_matmul_accumulate_avx512(const float* a, int lda,
                                                                     const float* w, int ldw,
                                                                     float* acc, int ldc, int M,
                                                                     int K, int N) {
  const int vectors = (N + 15) / 16;
  for (int m0 = 0; m0 < M;) {
    const int rows = even_share(M - m0, 6);
    for (int v0 = 0; v0 < vectors;) {
      const int vecs = even_share(vectors - v0, 4);
      const int tail = N - 16 * (v0 + vecs - 1);  // columns of the block's last vector, 1..16
      const auto last = static_cast<__mmask16>(tail >= 16 ? 0xffffu : (1u << tail) - 1);
      kBlocks512[static_cast<size_t>(rows)][static_cast<size_t>(vecs)](
          a + m0 * lda, lda, w + 16 * v0, ldw, acc + m0 * ldc + 16 * v0, ldc, K, last);
      v0 += vecs;
    }
    m0 += rows;
  }
}

bool mxu_matmul_avx2_supported() {
  return host_has_avx2_fma();
}

void mxu_matmul_accumulate_avx2(const float* a, int lda, const float* w, int ldw, float* acc,
                                int ldc, int M, int K, int N) {
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
}

}  // namespace detail
#endif

void mxu_matmul_accumulate(const float* a, int lda, const float* w, int ldw, float* acc, int ldc,
                           int M, int K, int N) {
#if defined(__x86_64__)
  if (detail::mxu_matmul_avx512_supported())
    return detail::mxu_matmul_accumulate_avx512(a, lda, w, ldw, acc, ldc, M, K, N);
  if (detail::mxu_matmul_avx2_supported())
    return detail::mxu_matmul_accumulate_avx2(a, lda, w, ldw, acc, ldc, M, K, N);
#endif
  mxu_matmul_accumulate_reference(a, lda, w, ldw, acc, ldc, M, K, N);
}

}  // namespace tessera::numerics
