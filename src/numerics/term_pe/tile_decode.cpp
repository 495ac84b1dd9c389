// Decoding fp32 operands for the vector tile (TileOperands::set_serial_row, set_parallel_row) and a
// serial row's live lanes (SerialSteps::build), once per row and MXU push.
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstring>
#include <vector>

#include "numerics/bf16.h"
#include "numerics/host_cpu.h"
#include "numerics/term_pe/tile.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tessera::numerics::detail {

static_assert(sizeof(TermOperand) == 4 && offsetof(TermOperand, significand) == 2 &&
                  offsetof(TermOperand, code) == 3,
              "set_serial_row writes TermOperand as one 32-bit word");

namespace {

#if defined(__x86_64__)
// 8 fp32 values as make_operand(bf16_from_f32(x)): the TermOperand words (exponent in bits 0-15,
// significand 16-23, code 24-31), their codes (code_of), significands and signs (all-ones if
// negative).
struct Decoded8 {
  __m256i word, code, significand, negative;
};

__attribute__((target("avx2"))) inline Decoded8 decode8(const float* a) {
  const __m256i u = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
  const __m256i one = _mm256_set1_epi32(1);
  // bf16_from_f32: NaN keeps sign and top payload with the quiet bit; else round to nearest even.
  const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
                                         _mm256_set1_epi32(0x7f800000));
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), one);
  const __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb), 16);
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
  const __m256i b = _mm256_blendv_epi8(rounded, quiet, nan);
  // decode_bf16.
  const __m256i e = _mm256_and_si256(_mm256_srli_epi32(b, 7), _mm256_set1_epi32(0xff));
  const __m256i frac = _mm256_and_si256(b, _mm256_set1_epi32(0x7f));
  const __m256i zero = _mm256_setzero_si256();
  const __m256i special = _mm256_cmpeq_epi32(e, _mm256_set1_epi32(0xff));
  const __m256i low = _mm256_cmpeq_epi32(e, zero);
  const __m256i nonzero_frac =
      _mm256_andnot_si256(_mm256_cmpeq_epi32(frac, zero), _mm256_set1_epi32(-1));
  const __m256i normal = _mm256_andnot_si256(_mm256_or_si256(special, low), _mm256_set1_epi32(-1));
  const __m256i subnormal = _mm256_and_si256(low, nonzero_frac);
  const __m256i exponent =
      _mm256_or_si256(_mm256_and_si256(normal, _mm256_sub_epi32(e, _mm256_set1_epi32(127))),
                      _mm256_and_si256(subnormal, _mm256_set1_epi32(-126)));
  const __m256i significand = _mm256_andnot_si256(
      special, _mm256_or_si256(frac, _mm256_and_si256(normal, _mm256_set1_epi32(0x80))));
  // Bf16Class: Zero 0, Finite 1, Inf 2, NaN 3.
  const __m256i finite = _mm256_or_si256(normal, subnormal);
  const __m256i cls = _mm256_add_epi32(
      _mm256_sub_epi32(zero, finite),
      _mm256_and_si256(special, _mm256_sub_epi32(_mm256_set1_epi32(2), nonzero_frac)));
  const __m256i code =
      _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(b, 15), one), _mm256_slli_epi32(cls, 1));
  const __m256i word = _mm256_or_si256(
      _mm256_and_si256(exponent, _mm256_set1_epi32(0xffff)),
      _mm256_or_si256(_mm256_slli_epi32(significand, 16), _mm256_slli_epi32(code, 24)));
  const __m256i c = _mm256_blendv_epi8(
      _mm256_blendv_epi8(_mm256_set1_epi32(kZeroCode), _mm256_set1_epi32(kSpecialCode), special),
      exponent, finite);
  return Decoded8{word, c, significand, _mm256_srai_epi32(_mm256_slli_epi32(b, 16), 31)};
}

__attribute__((target("avx2"))) void decode8_serial(const float* a, TermOperand* ops,
                                                    int32_t* codes) {
  const Decoded8 d = decode8(a);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(ops), d.word);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes), d.code);
}

// set_parallel of 8 entries at index i; returns the change in the count of Inf/NaN entries.
__attribute__((target("avx2"))) int decode8_parallel(const float* a, TileOperands& t, size_t i) {
  const Decoded8 d = decode8(a);
  const __m256i special = _mm256_set1_epi32(kSpecialCode);
  const __m256i old = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(&t.p_code[i]));
  const int delta = std::popcount(static_cast<unsigned>(_mm256_movemask_ps(
                        _mm256_castsi256_ps(_mm256_cmpeq_epi32(d.code, special))))) -
                    std::popcount(static_cast<unsigned>(
                        _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(old, special)))));
  const __m256i signed_significand =
      _mm256_and_si256(_mm256_sub_epi32(_mm256_xor_si256(d.significand, d.negative), d.negative),
                       _mm256_set1_epi32(0xffff));
  const __m256i word = _mm256_or_si256(_mm256_and_si256(d.negative, _mm256_set1_epi32(INT32_MIN)),
                                       _mm256_slli_epi32(d.significand, 18));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(&t.p_ops[i]), d.word);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(&t.p_code[i]), d.code);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(&t.p_signed[i]), signed_significand);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(&t.p_word[i]), word);
  return delta;
}
// Bit i of masks[j]: lane i of step j has a finite non-zero code (codes[j * L + i]); L is a
// multiple of 8. Returns whether any code is Inf/NaN.
__attribute__((target("avx2"))) bool live_masks_avx2(const int32_t* codes, int steps, int L,
                                                     uint64_t* masks) {
  const __m256i zero = _mm256_set1_epi32(kZeroCode), special = _mm256_set1_epi32(kSpecialCode);
  __m256i any_special = _mm256_setzero_si256();
  for (int j = 0; j < steps; ++j) {
    uint64_t mask = 0;
    for (int i = 0; i < L; i += kGroupPes) {
      const __m256i c = _mm256_loadu_si256(
          reinterpret_cast<const __m256i*>(&codes[static_cast<ptrdiff_t>(j) * L + i]));
      const __m256i is_special = _mm256_cmpeq_epi32(c, special);
      any_special = _mm256_or_si256(any_special, is_special);
      const auto dead = static_cast<unsigned>(_mm256_movemask_ps(
          _mm256_castsi256_ps(_mm256_or_si256(is_special, _mm256_cmpeq_epi32(c, zero)))));
      mask |= static_cast<uint64_t>(~dead & 0xffu) << i;
    }
    masks[j] = mask;
  }
  return !_mm256_testz_si256(any_special, any_special);
}
#endif

// live_masks_avx2's contract for any L.
bool live_masks(const int32_t* codes, int steps, int L, uint64_t* masks) {
#if defined(__x86_64__)
  if (L % kGroupPes == 0 && host_has_avx2()) return live_masks_avx2(codes, steps, L, masks);
#endif
  int any_special = 0;
  for (int j = 0; j < steps; ++j) {
    uint64_t mask = 0;
    for (int i = 0; i < L; ++i) {
      const int32_t c = codes[static_cast<ptrdiff_t>(j) * L + i];
      any_special |= c == kSpecialCode ? 1 : 0;
      mask |= static_cast<uint64_t>((c != kZeroCode) && (c != kSpecialCode)) << i;
    }
    masks[j] = mask;
  }
  return any_special != 0;
}

}  // namespace

void TileOperands::set_serial_row(int s, const float* a, int K) {
  int k = 0;
#if defined(__x86_64__)
  if (host_has_avx2())
    for (; k + kGroupPes <= K; k += kGroupPes) {
      const size_t i = static_cast<size_t>(s) * kp + k;
      decode8_serial(a + k, &s_ops[i], &s_code[i]);
    }
#endif
  for (; k < K; ++k) set_serial(s, k, make_operand(bf16_from_f32(a[k])));
}

void TileOperands::set_parallel_row(int k, const float* a, int count) {
  int x = 0;
#if defined(__x86_64__)
  if (host_has_avx2())
    for (; x + kGroupPes <= count; x += kGroupPes)
      p_specials += decode8_parallel(a + x, *this, static_cast<size_t>(k) * xp + x);
#endif
  for (; x < count; ++x) set_parallel(k, x, make_operand(bf16_from_f32(a[x])));
}

// The live lanes of a step are found as a bit mask without branching on the operands; each
// visited lane is live.
void SerialSteps::build(const TileOperands& ops, int s, int steps, int L) {
  lanes = L;
  live_count.assign(static_cast<size_t>(steps), 0);
  max_count.assign(static_cast<size_t>(steps), 0);
  count_sum.assign(static_cast<size_t>(steps), 0);
  min_low.assign(static_cast<size_t>(steps), 8);
  live.resize(static_cast<size_t>(steps) * L);
  const size_t row = static_cast<size_t>(s) * ops.kp;
  // Per significand: its CSD term count and lowest term power.
  static const std::array<std::array<uint8_t, 2>, 256> count_low = [] {
    std::array<std::array<uint8_t, 2>, 256> t{};
    for (int m = 0; m < 256; ++m) {
      const TermList& tl = csd_table()[m];
      t[m] = {tl.count, static_cast<uint8_t>(tl.count > 0 ? tl.terms[tl.count - 1].power : 0)};
    }
    return t;
  }();
  thread_local std::vector<uint64_t> masks;
  masks.resize(static_cast<size_t>(steps));
  special = live_masks(&ops.s_code[row], steps, L, masks.data());
  const TermOperand* step_ops = &ops.s_ops[row];
  for (int j = 0; j < steps; ++j, step_ops += L) {
    uint64_t mask = masks[static_cast<size_t>(j)];
    LiveB* out = &live[static_cast<size_t>(j) * L];
    int n = 0, most = 0, sum = 0, lowest = 8;
    for (; mask != 0; mask &= mask - 1) {
      const int i = std::countr_zero(mask);
      const TermOperand b = step_ops[i];
      const auto [count, low] = count_low[b.significand];
      LiveB l;
      l.exponent = b.exponent;
      l.signed_significand = (b.negative() ? -b.significand : b.significand) & 0xffff;
      l.lane = static_cast<uint8_t>(i);
      l.count = count;
      l.significand = b.significand;
      l.negative = b.negative() ? 1 : 0;
      l.biased_exponent = b.exponent + kExponentBias;
      l.oob_exponent = l.biased_exponent + low;
      l.packed_offset = (j * L + i) * kGroupPes;
      out[n++] = l;
      most = std::max<int>(most, count);
      sum += count;
      lowest = std::min<int>(lowest, low);
    }
    live_count[static_cast<size_t>(j)] = static_cast<uint8_t>(n);
    max_count[static_cast<size_t>(j)] = static_cast<uint8_t>(most);
    count_sum[static_cast<size_t>(j)] = sum;
    min_low[static_cast<size_t>(j)] = static_cast<uint8_t>(lowest);
  }
}

}  // namespace tessera::numerics::detail
