// Internal helpers shared by the vector tile's kernels (term_tile_avx2.cpp, term_tile_simd.h):
// vector loads and horizontal reductions of 8 lanes, and the table of terms from a power.
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

// terms_from()[m][c]: the number of CSD terms of significand m with power >= c (c = 0..15; 0 for
// c > 8), as a pshufb table.
const std::array<std::array<uint8_t, 16>, 256>& terms_from();

}  // namespace tessera::numerics::detail

#endif
