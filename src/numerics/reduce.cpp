#include "numerics/reduce.h"

#include <cmath>
#include <limits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "numerics/host_cpu.h"

namespace tessera::numerics {

namespace {

enum class TreeOp { Sum, Max };

#if defined(__x86_64__)
// One tree level, eight results at a time: v[i] = op(v[2i], v[2i+1]) for i < half (half a
// multiple of 8). The pairs are split into even and odd lanes and combined lane by lane with the
// scalar op's operations: one fp32 add per sum; for max, NaN if either is NaN (the scalar's quiet
// NaN), the bitwise AND of equal values (+0 beats -0; equal non-zeros are identical), else the
// larger. In place: block i0 reads v[2 i0, 2 i0 + 16) before writing v[i0, i0 + 8).
template <TreeOp Op>
__attribute__((target("avx2"))) void tree_level_avx2(float* v, int half) {
  const __m256 qnan = _mm256_set1_ps(std::numeric_limits<float>::quiet_NaN());
  for (int i = 0; i < half; i += 8) {
    const __m256 lo = _mm256_loadu_ps(v + 2 * i), hi = _mm256_loadu_ps(v + 2 * i + 8);
    // shuffle_ps works within 128-bit halves; permute4x64 puts the pairs back in order.
    const __m256 even = _mm256_castpd_ps(
        _mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0x88)), 0xd8));
    const __m256 odd = _mm256_castpd_ps(
        _mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0xdd)), 0xd8));
    __m256 r;
    if constexpr (Op == TreeOp::Sum) {
      r = _mm256_add_ps(even, odd);
    } else {
      const __m256 larger = _mm256_blendv_ps(odd, even, _mm256_cmp_ps(even, odd, _CMP_GT_OQ));
      const __m256 equal = _mm256_cmp_ps(even, odd, _CMP_EQ_OQ);
      r = _mm256_blendv_ps(larger, _mm256_and_ps(even, odd), equal);
      r = _mm256_blendv_ps(r, qnan, _mm256_cmp_ps(even, odd, _CMP_UNORD_Q));
    }
    _mm256_storeu_ps(v + i, r);
  }
}
#endif

template <TreeOp Op>
float tree_reduce(const float* x, int n, float identity) {
  int width = 1;
  while (width < n) width *= 2;
  float buf[1024];
  std::vector<float> heap;
  float* v = buf;
  if (width > 1024) {
    heap.resize(width);
    v = heap.data();
  }
  for (int i = 0; i < width; ++i) v[i] = i < n ? x[i] : identity;
  int half = width / 2;
#if defined(__x86_64__)
  if (host_has_avx2())
    for (; half >= 8; half /= 2) tree_level_avx2<Op>(v, half);
#endif
  for (; half >= 1; half /= 2)
    for (int i = 0; i < half; ++i)
      v[i] = Op == TreeOp::Sum ? v[2 * i] + v[2 * i + 1] : fmax_ieee(v[2 * i], v[2 * i + 1]);
  return width == 0 ? identity : v[0];
}

}  // namespace

float tree_sum(const float* x, int n) {
  if (n <= 0) return 0.0f;
  return tree_reduce<TreeOp::Sum>(x, n, 0.0f);
}

float tree_max(const float* x, int n) {
  if (n <= 0) return -std::numeric_limits<float>::infinity();
  return tree_reduce<TreeOp::Max>(x, n, -std::numeric_limits<float>::infinity());
}

}  // namespace tessera::numerics
