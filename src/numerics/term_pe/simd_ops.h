// The vector operations the tile's kernels are written in (numerics/term_pe/term_pe.h has the
// files and the call graph), at two widths:
// - Avx2Ops: 8 PEs in a 256-bit vector, one RowGroup per vector; lane masks are vectors (all ones
//   where true).
// - Avx512Ops: 16 PEs in a 512-bit vector (AVX-512 F and BW), two RowGroups side by side (PEs 0-7
//   and 8-15, the vector's "halves"); lane masks are mask registers.
// And three AVX2 helpers of the step-by-step path (ld, hsum, hmax). Every function names its own
// target, so both widths live in one ordinary header; code built from the operations must be
// compiled for the same target (term_pe.h, "Per-target instantiation").
#pragma once

#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>

namespace tessera::numerics::detail {

__attribute__((target("avx2"))) inline __m256i ld(const int32_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// Horizontal sum of 8 lanes.
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

#define TESSERA_AVX2_OP __attribute__((target("avx2"), always_inline)) static inline

struct Avx2Ops {
  using V = __m256i;
  using M = __m256i;
  static constexpr int kPes = 8;
  static constexpr int kHalves = 1;  // RowGroups (of kGroupPes PEs) per vector

  TESSERA_AVX2_OP V set1(int32_t x) { return _mm256_set1_epi32(x); }
  TESSERA_AVX2_OP V zero() { return _mm256_setzero_si256(); }
  TESSERA_AVX2_OP V load(const int32_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  TESSERA_AVX2_OP void store(int32_t* p, V v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
  }
  // The vector's groups' packed parallel operand (TileOperands::packed) at `offset` into each
  // block.
  TESSERA_AVX2_OP V load_packed(const int32_t* const* block, int32_t offset) {
    return load(block[0] + offset);
  }

  TESSERA_AVX2_OP V add(V a, V b) { return _mm256_add_epi32(a, b); }
  TESSERA_AVX2_OP V sub(V a, V b) { return _mm256_sub_epi32(a, b); }
  TESSERA_AVX2_OP V max(V a, V b) { return _mm256_max_epi32(a, b); }
  TESSERA_AVX2_OP V min(V a, V b) { return _mm256_min_epi32(a, b); }
  TESSERA_AVX2_OP V min_unsigned(V a, V b) { return _mm256_min_epu32(a, b); }
  TESSERA_AVX2_OP V bit_and(V a, V b) { return _mm256_and_si256(a, b); }
  TESSERA_AVX2_OP V bit_or(V a, V b) { return _mm256_or_si256(a, b); }
  TESSERA_AVX2_OP V bit_xor(V a, V b) { return _mm256_xor_si256(a, b); }
  TESSERA_AVX2_OP V abs(V a) { return _mm256_abs_epi32(a); }
  TESSERA_AVX2_OP V srai(V a, int c) { return _mm256_srai_epi32(a, c); }
  TESSERA_AVX2_OP V srli(V a, int c) { return _mm256_srli_epi32(a, c); }
  TESSERA_AVX2_OP V slli(V a, int c) { return _mm256_slli_epi32(a, c); }
  TESSERA_AVX2_OP V sllv(V a, V c) { return _mm256_sllv_epi32(a, c); }
  TESSERA_AVX2_OP V srlv(V a, V c) { return _mm256_srlv_epi32(a, c); }
  // The fp32 bits of the conversion of a (int to float, round to nearest even).
  TESSERA_AVX2_OP V f32_bits(V a) { return _mm256_castps_si256(_mm256_cvtepi32_ps(a)); }

  // 16-bit element operations.
  TESSERA_AVX2_OP V madd16(V a, V b) { return _mm256_madd_epi16(a, b); }
  TESSERA_AVX2_OP V mulhi_unsigned16(V a, V b) { return _mm256_mulhi_epu16(a, b); }
  TESSERA_AVX2_OP V add16(V a, V b) { return _mm256_add_epi16(a, b); }
  TESSERA_AVX2_OP V sub16(V a, V b) { return _mm256_sub_epi16(a, b); }
  TESSERA_AVX2_OP V abs16(V a) { return _mm256_abs_epi16(a); }
  // The low 16-bit half of every 32-bit lane copied into its high half.
  TESSERA_AVX2_OP V low_half_to_both(V a) {
    return _mm256_shuffle_epi8(
        a, _mm256_setr_epi8(0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13, 0, 1, 0, 1, 4, 5, 4,
                            5, 8, 9, 8, 9, 12, 13, 12, 13));
  }
  // The high half of every 32-bit lane of d, sign-extended and negated where `sign` is negative.
  // Where sign's high half is zero, d's high half must be zero (AVX2 zeroes it; AVX-512 keeps it).
  TESSERA_AVX2_OP V high_half_signed_by(V d, V sign) {
    return _mm256_srai_epi32(_mm256_sign_epi16(d, sign), 16);
  }
  // The 16 bytes at p in every 128-bit lane, and a byte shuffle within 128-bit lanes.
  TESSERA_AVX2_OP V broadcast_bytes16(const uint8_t* p) {
    return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  TESSERA_AVX2_OP V shuffle_bytes(V table, V index) { return _mm256_shuffle_epi8(table, index); }

  // Lane masks.
  TESSERA_AVX2_OP M gt(V a, V b) { return _mm256_cmpgt_epi32(a, b); }
  TESSERA_AVX2_OP M eq(V a, V b) { return _mm256_cmpeq_epi32(a, b); }
  TESSERA_AVX2_OP M mask_and(M a, M b) { return _mm256_and_si256(a, b); }
  TESSERA_AVX2_OP M mask_or(M a, M b) { return _mm256_or_si256(a, b); }
  TESSERA_AVX2_OP M mask_not(M a) { return _mm256_xor_si256(a, _mm256_set1_epi32(-1)); }
  TESSERA_AVX2_OP bool any(M m, M valid) { return !_mm256_testz_si256(m, valid); }
  // Bit h set iff half h has a lane of m.
  TESSERA_AVX2_OP uint32_t halves_with(M m) { return _mm256_testz_si256(m, m) ? 0u : 1u; }
  // The first valid[h] PEs of every half h.
  TESSERA_AVX2_OP M first_pes(const int* valid) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(valid[0]),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  TESSERA_AVX2_OP V keep(M m, V x) { return _mm256_and_si256(m, x); }  // x where m, else 0
  TESSERA_AVX2_OP V select(M m, V if_true, V if_false) {
    return _mm256_blendv_epi8(if_false, if_true, m);
  }
  TESSERA_AVX2_OP V increment_where(M m, V x) { return _mm256_sub_epi32(x, m); }
  TESSERA_AVX2_OP V decrement_where(M m, V x) { return _mm256_add_epi32(x, m); }
  // x with the sign of s (s != 0; where s = 0, x is 0 or irrelevant).
  TESSERA_AVX2_OP V with_sign_of(V x, V s) { return _mm256_sign_epi32(x, s); }

  // Sums and maxima of every half's PEs.
  TESSERA_AVX2_OP void half_sums(V v, int64_t* out) { out[0] = hsum(v); }
  TESSERA_AVX2_OP void half_maxima(V v, int* out) { out[0] = hmax(v); }

  // Nibble t of the result (t < N <= 8) is non-zero iff m[t] is negative in some PE: the sign bits
  // packed to bytes, lane t's PEs 0-3 and 4-7 at bytes 4t.. of the two 128-bit lanes.
  template <int N>
  __attribute__((target("avx2"), always_inline)) static inline uint32_t negative_lanes(const V* m) {
    V padded[8];
    for (int t = 0; t < 8; ++t) padded[t] = t < N ? m[t] : zero();
    uint32_t nibbles = 0;
    for (int t0 = 0; t0 < N; t0 += 4) {
      const V q = _mm256_packs_epi16(_mm256_packs_epi32(padded[t0], padded[t0 + 1]),
                                     _mm256_packs_epi32(padded[t0 + 2], padded[t0 + 3]));
      const auto bits = static_cast<uint32_t>(_mm256_movemask_epi8(q));
      nibbles |= ((bits | bits >> 16) & 0xffffu) << (4 * t0);
    }
    return nibbles;
  }
};

#undef TESSERA_AVX2_OP

#define TESSERA_AVX512_OP __attribute__((target("avx512f,avx512bw"), always_inline)) static inline

struct Avx512Ops {
  using V = __m512i;
  using M = __mmask16;
  static constexpr int kPes = 16;
  static constexpr int kHalves = 2;

  TESSERA_AVX512_OP V set1(int32_t x) { return _mm512_set1_epi32(x); }
  TESSERA_AVX512_OP V zero() { return _mm512_setzero_si512(); }
  TESSERA_AVX512_OP V load(const int32_t* p) { return _mm512_loadu_si512(p); }
  TESSERA_AVX512_OP void store(int32_t* p, V v) { _mm512_storeu_si512(p, v); }
  TESSERA_AVX512_OP V load_packed(const int32_t* const* block, int32_t offset) {
    const __m256i low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block[0] + offset));
    return _mm512_inserti64x4(
        _mm512_castsi256_si512(low),
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block[1] + offset)), 1);
  }

  TESSERA_AVX512_OP V add(V a, V b) { return _mm512_add_epi32(a, b); }
  TESSERA_AVX512_OP V sub(V a, V b) { return _mm512_sub_epi32(a, b); }
  TESSERA_AVX512_OP V max(V a, V b) { return _mm512_max_epi32(a, b); }
  TESSERA_AVX512_OP V min(V a, V b) { return _mm512_min_epi32(a, b); }
  TESSERA_AVX512_OP V min_unsigned(V a, V b) { return _mm512_min_epu32(a, b); }
  TESSERA_AVX512_OP V bit_and(V a, V b) { return _mm512_and_si512(a, b); }
  TESSERA_AVX512_OP V bit_or(V a, V b) { return _mm512_or_si512(a, b); }
  TESSERA_AVX512_OP V bit_xor(V a, V b) { return _mm512_xor_si512(a, b); }
  TESSERA_AVX512_OP V abs(V a) { return _mm512_abs_epi32(a); }
  TESSERA_AVX512_OP V srai(V a, int c) { return _mm512_srai_epi32(a, static_cast<unsigned>(c)); }
  TESSERA_AVX512_OP V srli(V a, int c) { return _mm512_srli_epi32(a, static_cast<unsigned>(c)); }
  TESSERA_AVX512_OP V slli(V a, int c) { return _mm512_slli_epi32(a, static_cast<unsigned>(c)); }
  TESSERA_AVX512_OP V sllv(V a, V c) { return _mm512_sllv_epi32(a, c); }
  TESSERA_AVX512_OP V srlv(V a, V c) { return _mm512_srlv_epi32(a, c); }
  TESSERA_AVX512_OP V f32_bits(V a) { return _mm512_castps_si512(_mm512_cvtepi32_ps(a)); }

  TESSERA_AVX512_OP V madd16(V a, V b) { return _mm512_madd_epi16(a, b); }
  TESSERA_AVX512_OP V mulhi_unsigned16(V a, V b) { return _mm512_mulhi_epu16(a, b); }
  TESSERA_AVX512_OP V add16(V a, V b) { return _mm512_add_epi16(a, b); }
  TESSERA_AVX512_OP V sub16(V a, V b) { return _mm512_sub_epi16(a, b); }
  TESSERA_AVX512_OP V abs16(V a) { return _mm512_abs_epi16(a); }
  TESSERA_AVX512_OP V low_half_to_both(V a) {
    return _mm512_shuffle_epi8(a, _mm512_broadcast_i32x4(_mm_setr_epi8(0, 1, 0, 1, 4, 5, 4, 5, 8, 9,
                                                                       8, 9, 12, 13, 12, 13)));
  }
  TESSERA_AVX512_OP V high_half_signed_by(V d, V sign) {
    const V high = _mm512_srai_epi32(d, 16);
    return _mm512_mask_sub_epi32(high, _mm512_cmplt_epi32_mask(sign, _mm512_setzero_si512()),
                                 _mm512_setzero_si512(), high);
  }
  TESSERA_AVX512_OP V broadcast_bytes16(const uint8_t* p) {
    return _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  TESSERA_AVX512_OP V shuffle_bytes(V table, V index) { return _mm512_shuffle_epi8(table, index); }

  TESSERA_AVX512_OP M gt(V a, V b) { return _mm512_cmpgt_epi32_mask(a, b); }
  TESSERA_AVX512_OP M eq(V a, V b) { return _mm512_cmpeq_epi32_mask(a, b); }
  TESSERA_AVX512_OP M mask_and(M a, M b) { return static_cast<M>(a & b); }
  TESSERA_AVX512_OP M mask_or(M a, M b) { return static_cast<M>(a | b); }
  TESSERA_AVX512_OP M mask_not(M a) { return static_cast<M>(~a); }
  TESSERA_AVX512_OP bool any(M m, M valid) { return (m & valid) != 0; }
  TESSERA_AVX512_OP uint32_t halves_with(M m) {
    return ((m & 0xffu) != 0 ? 1u : 0u) | ((m >> 8) != 0 ? 2u : 0u);
  }
  TESSERA_AVX512_OP M first_pes(const int* valid) {
    return static_cast<M>(((1u << valid[0]) - 1) | ((1u << valid[1]) - 1) << 8);
  }
  TESSERA_AVX512_OP V keep(M m, V x) { return _mm512_maskz_mov_epi32(m, x); }
  TESSERA_AVX512_OP V select(M m, V if_true, V if_false) {
    return _mm512_mask_blend_epi32(m, if_false, if_true);
  }
  TESSERA_AVX512_OP V increment_where(M m, V x) {
    return _mm512_mask_add_epi32(x, m, x, _mm512_set1_epi32(1));
  }
  TESSERA_AVX512_OP V decrement_where(M m, V x) {
    return _mm512_mask_sub_epi32(x, m, x, _mm512_set1_epi32(1));
  }
  TESSERA_AVX512_OP V with_sign_of(V x, V s) {
    return _mm512_mask_sub_epi32(x, _mm512_cmplt_epi32_mask(s, _mm512_setzero_si512()),
                                 _mm512_setzero_si512(), x);
  }

  TESSERA_AVX512_OP void half_sums(V v, int64_t* out) {
    out[0] = hsum(_mm512_castsi512_si256(v));
    out[1] = hsum(_mm512_extracti64x4_epi64(v, 1));
  }
  TESSERA_AVX512_OP void half_maxima(V v, int* out) {
    out[0] = hmax(_mm512_castsi512_si256(v));
    out[1] = hmax(_mm512_extracti64x4_epi64(v, 1));
  }

  // As Avx2Ops::negative_lanes, over four 128-bit lanes.
  template <int N>
  __attribute__((target("avx512f,avx512bw"), always_inline)) static inline uint32_t negative_lanes(
      const V* m) {
    V padded[8];
    for (int t = 0; t < 8; ++t) padded[t] = t < N ? m[t] : zero();
    uint32_t nibbles = 0;
    for (int t0 = 0; t0 < N; t0 += 4) {
      const V q = _mm512_packs_epi16(_mm512_packs_epi32(padded[t0], padded[t0 + 1]),
                                     _mm512_packs_epi32(padded[t0 + 2], padded[t0 + 3]));
      const uint64_t bits = _mm512_movepi8_mask(q);
      nibbles |= static_cast<uint32_t>((bits | bits >> 16 | bits >> 32 | bits >> 48) & 0xffffu)
                 << (4 * t0);
    }
    return nibbles;
  }
};

#undef TESSERA_AVX512_OP

}  // namespace tessera::numerics::detail

#endif
