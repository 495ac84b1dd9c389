// Internal helpers shared by the vector tile's kernels (term_tile_avx2.cpp, term_tile_simd.h):
// vector loads and horizontal reductions of 8 lanes, the rounding to the accumulator's width, and
// the table of terms from a power.
#pragma once

#include <array>
#include <cstdint>

#include "numerics/term_tile_avx2.h"

#if defined(__x86_64__)
#include <immintrin.h>

namespace tessera::numerics::detail {

__attribute__((target("avx2"))) inline __m256i ld(const int32_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

__attribute__((target("avx2"))) inline int hsum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

// Horizontal maximum of 8 lanes.
__attribute__((target("avx2"))) inline int hmax(__m256i v) {
  __m128i m = _mm_max_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0x4e));
  m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0xb1));
  return _mm_cvtsi128_si32(m);
}

// Contract step 5's rounding: mag (0 < mag < 2^31, a window sum's magnitude) rounded to W + 1
// significant bits, nearest even, as q * 2^s with 2^W <= q < 2^(W+1) (garbage where mag = 0).
__attribute__((target("avx2"))) inline void round_to_width(__m256i mag, int W, __m256i& q, __m256i& s) {
  const __m256i one = _mm256_set1_epi32(1);
  // Leading bit: the float exponent, less one where the conversion rounded up to a power of two.
  __m256i lead =
      _mm256_sub_epi32(_mm256_srli_epi32(_mm256_castps_si256(_mm256_cvtepi32_ps(mag)), 23), _mm256_set1_epi32(127));
  lead = _mm256_add_epi32(lead, _mm256_cmpgt_epi32(_mm256_sllv_epi32(one, lead), mag));
  s = _mm256_sub_epi32(lead, _mm256_set1_epi32(W));
  const __m256i right = _mm256_cmpgt_epi32(s, _mm256_setzero_si256());
  __m256i q_right = _mm256_srlv_epi32(mag, s);
  const __m256i rem = _mm256_and_si256(mag, _mm256_sub_epi32(_mm256_sllv_epi32(one, s), one));
  const __m256i half = _mm256_sllv_epi32(one, _mm256_sub_epi32(s, one));
  const __m256i odd = _mm256_cmpeq_epi32(_mm256_and_si256(q_right, one), one);
  const __m256i up =
      _mm256_or_si256(_mm256_cmpgt_epi32(rem, half), _mm256_and_si256(_mm256_cmpeq_epi32(rem, half), odd));
  q_right = _mm256_sub_epi32(q_right, up);
  const __m256i q_left = _mm256_sllv_epi32(mag, _mm256_sub_epi32(_mm256_setzero_si256(), s));
  q = _mm256_blendv_epi8(q_left, q_right, right);
  const __m256i carry = _mm256_cmpgt_epi32(q, _mm256_set1_epi32((1 << (W + 1)) - 1));
  q = _mm256_blendv_epi8(q, _mm256_srli_epi32(q, 1), carry);
  s = _mm256_sub_epi32(s, carry);
}

// terms_from()[m][c]: the number of CSD terms of significand m with power >= c (c = 0..15; 0 for
// c > 8), as a pshufb table.
const std::array<std::array<uint8_t, 16>, 256>& terms_from();

}  // namespace tessera::numerics::detail

#endif
