#include "numerics/term_tile_group_avx2.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <iterator>
#include <vector>

#include "common/error.h"
#include "numerics/term_tile_avx2_common.h"

namespace tessera::numerics::detail {

#if defined(__x86_64__)

// The accumulator width whose normalisation is fp32's int-to-float conversion (the default, fast case).
constexpr int kFullWidth = 23;

bool group_run_supported(const PeConfig& cfg) {
  return cfg.acc_fraction_bits <= kFullWidth && cfg.lanes <= kGroupPes && tile_avx2_supported(cfg);
}

namespace {

constexpr int kPairSlots = 4;  // at most 4 CSD terms of one sign in an 8-bit significand

// Per B, indexed by signed_significand & 0x1ff (mb for a positive B, 512 - mb for a negative
// one): the multipliers of truncated_terms. Dword i holds 2^(7 + p) of the i-th term that adds
// (its CSD sign times B's sign positive) in its high half and of the i-th term that subtracts in
// its low half; 0 pads.
struct PairTerms {
  uint32_t mult[kPairSlots];
};

const std::array<PairTerms, 512>& pair_terms() {
  static const std::array<PairTerms, 512> table = [] {
    std::array<PairTerms, 512> t{};
    for (int mb = 1; mb < 256; ++mb)
      for (const bool negative : {false, true}) {
        PairTerms& e = t[static_cast<size_t>(negative ? 512 - mb : mb)];
        const TermList& tl = csd_table()[mb];
        int adding = 0, subtracting = 0;
        for (int i = 0; i < tl.count; ++i) {
          const bool adds = (tl.terms[i].sign > 0) != negative;
          int& slot = adds ? adding : subtracting;
          TESSERA_CHECK(slot < kPairSlots, "pair_terms: too many terms of one sign");
          e.mult[slot++] |= (uint32_t{1} << (7 + tl.terms[i].power)) << (adds ? 16 : 0);
        }
      }
    return t;
  }();
  return table;
}

// A lane's truncated contribution in window units in every PE: where h = gbase - pe >= 1, the
// sum over B's CSD terms (p, s) of s * floor(ma * 2^(p - h)) with the lane's sign; 0 where h <= 0
// (the exact products add those) and where A is zero. shift = h - 1, as unsigned (h <= 0: >= 2^31).
// Z = (ma << 8) >> (h - 1) = floor(ma * 2^(9 - h)) < 2^16 (0 where h <= 0: srlv gives 0 for counts
// >= 32), and floor(ma * 2^(p - h)) = floor(Z * 2^(p - 9)) (nested floors, p <= 8): the high half
// of the 16-bit product Z * 2^(7 + p) (mulhi). With Z in both halves of a 32-bit lane, the sums of
// the adding terms (high half) and of the subtracting ones (low half) come from kPairSlots
// multiplies by `mult` (the lane's PairTerms, broadcast); the high half of sum - (sum << 16) is
// their difference. It is exact in 16 bits: the lane's value lies within the term count of
// ma * mb / 2^h <= 255 * 255 / 2, so in [-32517, 32517].
__attribute__((target("avx2"), always_inline)) inline __m256i truncated_terms(const __m256i* mult, __m256i word, __m256i shift) {
  const __m256i high = _mm256_slli_epi32(word, 16);  // signed ma in the high half
  const __m256i z = _mm256_srlv_epi32(_mm256_srli_epi32(_mm256_abs_epi16(high), 8), shift);
  const __m256i both = _mm256_shuffle_epi8(
      z, _mm256_setr_epi8(0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13, 0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13));
  __m256i sum = _mm256_mulhi_epu16(both, mult[0]);
  for (int i = 1; i < kPairSlots; ++i) sum = _mm256_add_epi16(sum, _mm256_mulhi_epu16(both, mult[i]));
  const __m256i difference = _mm256_sub_epi16(sum, _mm256_slli_epi32(sum, 16));
  // A's sign applied in the high half, which the arithmetic shift then sign-extends.
  return _mm256_srai_epi32(_mm256_sign_epi16(difference, high), 16);
}

// One group between steps. Accumulator of PE v: zero if a_eb = 0, else sign of a_sgn, significand
// a_mag (2^23 <= a_mag < 2^24) and exponent a_eb - kExponentBias.
struct Run {
  const PeConfig* cfg;
  const std::array<std::array<uint8_t, 16>, 256>* terms_from;
  const int32_t* packed;
  int* slowest;  // [j]
  __m256i valid;
  __m256i a_eb, a_mag, a_sgn;
  __m256i exponent_max;  // over all steps: an overflow check at the end
  __m256i processed_acc, nonzero_acc, cycle_acc;
  int64_t uniform_processed, uniform_cycles;  // per PE, over the steps timed by the serial row
};

// What every group meets in step j, prepared once for all of them: the live serial lanes, their
// exponents and signed significands broadcast, and the row's per-step figures.
struct StepLanes {
  const SerialSteps::LiveB* b;
  __m256i biased_exponent[kGroupPes], signed_significand[kGroupPes];
  __m256i mult[kGroupPes][kPairSlots];  // the lanes' PairTerms multipliers (truncated_terms)
  __m256i min_low;     // the lowest term power over the live Bs
  __m256i e_floor;     // the fixed exponent (biased) in fixed-exponent mode, else 0 (no floor)
  int row_cycles;      // max(most terms of a live B, min_step_cycles)
  int row_processed;   // the terms of all live Bs
};

template <int N>
__attribute__((target("avx2"), always_inline)) inline void prepare(StepLanes& s, const SerialSteps& row, const PeConfig& cfg, const PairTerms* pairs, int j) {
  s.b = &row.live[static_cast<size_t>(j) * row.lanes];
  for (int t = 0; t < N; ++t) {
    s.biased_exponent[t] = _mm256_set1_epi32(s.b[t].biased_exponent);
    s.signed_significand[t] = _mm256_set1_epi32(s.b[t].signed_significand);
    const PairTerms& pt = pairs[s.b[t].signed_significand & 0x1ff];
    for (int i = 0; i < kPairSlots; ++i) s.mult[t][i] = _mm256_set1_epi32(static_cast<int32_t>(pt.mult[i]));
  }
  s.min_low = _mm256_set1_epi32(row.min_low[static_cast<size_t>(j)]);
  s.row_cycles = std::max<int>(row.max_count[static_cast<size_t>(j)], cfg.min_step_cycles);
  s.row_processed = row.count_sum[static_cast<size_t>(j)];
  s.e_floor = _mm256_set1_epi32(cfg.fixed_exponent_mode ? cfg.fixed_exponent + kExponentBias : 0);
}

// A step timed by the serial row: every live lane processes all its terms in every valid PE.
inline int row_timed(Run& r, const StepLanes& s) {
  r.uniform_cycles += s.row_cycles;
  r.uniform_processed += s.row_processed;
  return s.row_cycles;
}

// Step j timed per PE and lane: the terms not out of bounds of lanes with a non-zero A. If no
// lane with a non-zero A can have an out-of-bounds term (the smallest such product exponent plus
// the row's lowest power clears limit = E - (W - 7)), a lane's terms are its B's count.
template <int N, bool kMaybeOob>
__attribute__((target("avx2"), always_inline)) inline int lane_counts(Run& r, const SerialSteps::LiveB* b, const __m256i* pe,
                                                                   __m256i gbase) {
  __m256i proc_max = _mm256_setzero_si256(), processed = _mm256_setzero_si256(), nonzero = _mm256_setzero_si256();
  for (int t = 0; t < N; ++t) {
    const __m256i count = _mm256_and_si256(_mm256_cmpgt_epi32(pe[t], _mm256_setzero_si256()), _mm256_set1_epi32(b[t].count));
    const __m256i lane = kMaybeOob ? processed_terms(*r.terms_from, b[t], pe[t], gbase) : count;
    proc_max = _mm256_max_epi32(proc_max, lane);
    processed = _mm256_add_epi32(processed, lane);
    nonzero = _mm256_add_epi32(nonzero, count);
  }
  r.processed_acc = _mm256_add_epi32(r.processed_acc, _mm256_and_si256(processed, r.valid));
  r.nonzero_acc = _mm256_add_epi32(r.nonzero_acc, _mm256_and_si256(nonzero, r.valid));
  const __m256i c = _mm256_and_si256(_mm256_max_epi32(proc_max, _mm256_set1_epi32(r.cfg->min_step_cycles)), r.valid);
  r.cycle_acc = _mm256_add_epi32(r.cycle_acc, c);
  return hmax(c);
}

template <int N>
__attribute__((target("avx2"), always_inline)) inline int lane_timed(Run& r, const StepLanes& s, const SerialSteps::LiveB* b, const __m256i* pe,
                                                                  __m256i gbase, __m256i limit) {
  __m256i umin = _mm256_set1_epi32(-1);  // unsigned: a zero A (negative) drops out
  for (int t = 0; t < N; ++t) umin = _mm256_min_epu32(umin, pe[t]);
  const __m256i low = _mm256_add_epi32(umin, s.min_low);
  const bool maybe_oob = !_mm256_testz_si256(_mm256_cmpgt_epi32(limit, low), r.valid);
  return maybe_oob ? lane_counts<N, true>(r, b, pe, gbase) : lane_counts<N, false>(r, b, pe, gbase);
}

// Nibble t of the result is non-zero iff m[t] (t < N <= 8) is negative in some PE: the sign bits
// packed to bytes, lane t's PEs 0-3 and 4-7 at bytes 4t.. of the two 128-bit halves.
template <int N>
__attribute__((target("avx2"), always_inline)) inline uint32_t truncated_lanes(const __m256i* m) {
  __m256i padded[8];
  for (int t = 0; t < 8; ++t) padded[t] = t < N ? m[t] : _mm256_setzero_si256();
  uint32_t nibbles = 0;
  for (int t0 = 0; t0 < N; t0 += 4) {
    const __m256i q = _mm256_packs_epi16(_mm256_packs_epi32(padded[t0], padded[t0 + 1]),
                                         _mm256_packs_epi32(padded[t0 + 2], padded[t0 + 3]));
    const auto bits = static_cast<uint32_t>(_mm256_movemask_epi8(q));
    nibbles |= ((bits | bits >> 16) & 0xffffu) << (4 * t0);
  }
  return nibbles;
}

// Step j with N live lanes (exponents biased by kExponentBias; a zero A is coded kPackedZero, so its
// product exponent is negative).
template <int N, bool kFull>
__attribute__((target("avx2"), always_inline)) inline void step(Run& r, int j, const StepLanes& s) {
  const int W = kFull ? kFullWidth : r.cfg->acc_fraction_bits;
  const SerialSteps::LiveB* b = s.b;
  constexpr int kSlots = N > 0 ? N : 1;
  __m256i w[kSlots], pe[kSlots];
  // Maximum and minimum product exponents (every A zero: negative; E is then the accumulator's,
  // as a_eb and e_floor are >= 0), and the exact products shifted into the window (0 where the
  // shift is negative, i.e. g < 0). Without live lanes: nothing but the accumulator.
  __m256i pe_max = _mm256_setzero_si256(), smin = _mm256_set1_epi32(INT32_MAX);
  for (int t = 0; t < N; ++t) {
    w[t] = ld(r.packed + b[t].packed_offset);
    pe[t] = _mm256_add_epi32(_mm256_srai_epi32(w[t], 16), s.biased_exponent[t]);
    pe_max = t == 0 ? pe[t] : _mm256_max_epi32(pe_max, pe[t]);
    smin = t == 0 ? pe[t] : _mm256_min_epi32(smin, pe[t]);
  }
  const __m256i E = _mm256_max_epi32(_mm256_max_epi32(pe_max, r.a_eb), s.e_floor);
  const __m256i gbase = _mm256_sub_epi32(E, _mm256_set1_epi32(W - 14));
  __m256i value = _mm256_setzero_si256(), g[kSlots];  // g = pe - gbase (contract: W - 14 - (E - pe))
  for (int t = 0; t < N; ++t) {
    g[t] = _mm256_sub_epi32(pe[t], gbase);
    const __m256i exact = _mm256_sllv_epi32(_mm256_madd_epi16(w[t], s.signed_significand[t]), g[t]);
    value = t == 0 ? exact : _mm256_add_epi32(value, exact);
  }
  int slowest;
  if (_mm256_testz_si256(_mm256_cmpgt_epi32(gbase, smin), r.valid)) {
    // Every product of every valid PE in the window's top (exact) and every A of a live lane non-zero.
    slowest = row_timed(r, s);
  } else {
    // Lanes with g < 0 in some PE add their truncated terms (0 in the other PEs, in PEs beyond
    // the valid ones, which hold +0 or another block's operands never stored, and for a zero A).
    // truncated_terms' shift h - 1 = -g - 1 = ~g.
    for (uint32_t lanes = truncated_lanes<N>(g); lanes != 0;) {
      const int t = std::countr_zero(lanes) / 4;
      lanes &= ~(uint32_t{0xf} << (4 * t));
      value = _mm256_add_epi32(value, truncated_terms(s.mult[t], w[t], _mm256_xor_si256(g[t], _mm256_set1_epi32(-1))));
    }
    // No zero A and no out-of-bounds term (pe + lowest power >= E - (W - 7) for every live lane)
    // if the minimum product exponent plus the row's lowest power clears it.
    const __m256i limit = _mm256_sub_epi32(E, _mm256_set1_epi32(W - 7));
    const __m256i low = _mm256_add_epi32(smin, s.min_low);
    slowest = _mm256_testz_si256(_mm256_cmpgt_epi32(limit, low), r.valid) ? row_timed(r, s) : lane_timed<N>(r, s, b, pe, gbase, limit);
  }
  r.slowest[j] = slowest;
  // Contract step 5: the accumulator truncated to the window, added, rounded to W + 1 bits (at
  // W = 23 the conversion's round to nearest even, else round_to_width); a zero sum is +0.
  const __m256i aligned = _mm256_sign_epi32(_mm256_srlv_epi32(r.a_mag, _mm256_sub_epi32(E, r.a_eb)), r.a_sgn);
  const __m256i sum = _mm256_add_epi32(value, aligned);
  const __m256i zero = _mm256_cmpeq_epi32(sum, _mm256_setzero_si256());
  if constexpr (kFull) {
    const __m256i bits = _mm256_castps_si256(_mm256_cvtepi32_ps(_mm256_abs_epi32(sum)));
    r.a_mag = _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x7fffff)), _mm256_set1_epi32(0x800000));
    r.a_eb = _mm256_andnot_si256(zero, _mm256_add_epi32(E, _mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(127 + W))));
  } else {
    __m256i shift;
    round_to_width(_mm256_abs_epi32(sum), W, r.a_mag, shift);  // a_mag is garbage for a zero sum, a_eb = 0 drops it
    r.a_eb = _mm256_andnot_si256(zero, _mm256_add_epi32(E, shift));
  }
  r.a_sgn = sum;
  r.exponent_max = _mm256_max_epi32(r.exponent_max, r.a_eb);
}

// Step j of groups runs[0..n) (n >= 1), with N live serial lanes prepared once for all of them.
template <int N, bool kFull>
__attribute__((target("avx2"), always_inline)) inline void step_of_groups(Run* runs, int n, int j, const SerialSteps& row, const PairTerms* pairs) {
  StepLanes s;
  prepare<N>(s, row, *runs[0].cfg, pairs, j);
  for (int i = 0; i < n; ++i) step<N, kFull>(runs[i], j, s);
}

// All steps of groups runs[0..n), step by step: step j of every group, then step j + 1 (the
// groups meet the same serial lanes, so the dispatch on the live lane count and the lanes'
// broadcasts are done once per step).
template <bool kFull>
__attribute__((target("avx2"))) void run_steps(Run* runs, int n, int steps, const SerialSteps& row) {
  if (n == 0) return;
  const PairTerms* pairs = pair_terms().data();
  for (int j = 0; j < steps; ++j) {
#define TESSERA_STEPS(N) \
  case N:                \
    step_of_groups<N, kFull>(runs, n, j, row, pairs); \
    break;
    switch (row.live_count[static_cast<size_t>(j)]) {
      TESSERA_STEPS(0)
      TESSERA_STEPS(1)
      TESSERA_STEPS(2)
      TESSERA_STEPS(3)
      TESSERA_STEPS(4)
      TESSERA_STEPS(5)
      TESSERA_STEPS(6)
      TESSERA_STEPS(7)
      default:
        step_of_groups<8, kFull>(runs, n, j, row, pairs);
    }
#undef TESSERA_STEPS
  }
}

// Loads the start accumulators, rounded to W + 1 bits as accumulator_from_f32 does (nearest even;
// exact for values a W-bit accumulator wrote); false if one is not +0 or an fp32 normal number
// whose rounded exponent is <= acc_max_exponent.
__attribute__((target("avx2"))) bool load(Run& r, const float* in, int stride, int valid) {
  alignas(32) int32_t b[kGroupPes] = {};
  for (int v = 0; v < valid; ++v) std::memcpy(&b[v], &in[static_cast<ptrdiff_t>(v) * stride], sizeof(float));
  const __m256i bits = ld(b);
  const int cut = kFullWidth - r.cfg->acc_fraction_bits;  // fraction bits the accumulator lacks
  __m256i magnitude = _mm256_and_si256(bits, _mm256_set1_epi32(INT32_MAX));
  if (cut > 0) {  // round to nearest even at bit `cut` of the fp32 pattern: a carry raises the exponent
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(magnitude, cut), _mm256_set1_epi32(1));
    magnitude = _mm256_add_epi32(magnitude, _mm256_add_epi32(_mm256_set1_epi32((1 << (cut - 1)) - 1), odd));
    magnitude = _mm256_and_si256(magnitude, _mm256_set1_epi32(-(1 << cut)));
  }
  const __m256i biased = _mm256_srli_epi32(magnitude, 23);
  const __m256i zero = _mm256_cmpeq_epi32(bits, _mm256_setzero_si256());
  const __m256i normal = _mm256_and_si256(_mm256_cmpgt_epi32(biased, _mm256_setzero_si256()),
                                          _mm256_cmpgt_epi32(_mm256_set1_epi32(std::min(r.cfg->acc_max_exponent, 127) + 128), biased));
  const __m256i bad = _mm256_andnot_si256(_mm256_or_si256(zero, normal), _mm256_set1_epi32(-1));
  if (!_mm256_testz_si256(bad, bad)) return false;
  r.a_eb = _mm256_andnot_si256(zero, _mm256_add_epi32(biased, _mm256_set1_epi32(kExponentBias - 127)));
  r.a_mag = _mm256_srli_epi32(_mm256_or_si256(_mm256_and_si256(magnitude, _mm256_set1_epi32(0x7fffff)), _mm256_set1_epi32(0x800000)), cut);
  r.a_sgn = bits;
  return true;
}

// Writes the accumulators as fp32; false (nothing written) if one overflowed in some step or ends
// outside fp32's normal range.
__attribute__((target("avx2"))) bool store(const Run& r, float* out, int stride, int valid) {
  const __m256i overflow = _mm256_cmpgt_epi32(r.exponent_max, _mm256_set1_epi32(r.cfg->acc_max_exponent + kExponentBias));
  if (!_mm256_testz_si256(overflow, r.valid)) return false;
  const __m256i nonzero = _mm256_xor_si256(_mm256_cmpeq_epi32(r.a_eb, _mm256_setzero_si256()), _mm256_set1_epi32(-1));
  const __m256i biased = _mm256_sub_epi32(r.a_eb, _mm256_set1_epi32(kExponentBias - 127));
  const __m256i in_range =
      _mm256_and_si256(_mm256_cmpgt_epi32(biased, _mm256_setzero_si256()), _mm256_cmpgt_epi32(_mm256_set1_epi32(255), biased));
  if (!_mm256_testz_si256(_mm256_andnot_si256(in_range, nonzero), r.valid)) return false;
  const int cut = kFullWidth - r.cfg->acc_fraction_bits;
  const __m256i magnitude = _mm256_or_si256(_mm256_slli_epi32(biased, 23),
                                            _mm256_and_si256(_mm256_slli_epi32(r.a_mag, cut), _mm256_set1_epi32(0x7fffff)));
  const __m256i bits = _mm256_and_si256(
      _mm256_or_si256(magnitude, _mm256_and_si256(r.a_sgn, _mm256_set1_epi32(INT32_MIN))), nonzero);
  alignas(32) int32_t b[kGroupPes];
  _mm256_store_si256(reinterpret_cast<__m256i*>(b), bits);
  for (int v = 0; v < valid; ++v) std::memcpy(&out[static_cast<ptrdiff_t>(v) * stride], &b[v], sizeof(float));
  return true;
}

// Adds a finished group's counters to totals and raises its blocks' step maxima.
__attribute__((target("avx2"))) void finish(const Run& r, int valid, int steps, int* step_max, GroupTotals& totals) {
  for (int j = 0; j < steps; ++j) step_max[j] = std::max(step_max[j], r.slowest[j]);
  const int64_t cycle_sum = hsum(r.cycle_acc) + r.uniform_cycles * valid;
  const int64_t processed = hsum(r.processed_acc) + r.uniform_processed * valid;
  const int64_t nonzero = hsum(r.nonzero_acc) + r.uniform_processed * valid;
  totals.add_group(cycle_sum, processed, nonzero, steps, valid, r.cfg->lanes);
}

}  // namespace

__attribute__((target("avx2"))) void group_runs_avx2(const PeConfig& cfg, const TileOperands& ops, const SerialSteps& row,
                                                     int steps, const RowGroup* groups, int count, GroupTotals& totals,
                                                     uint8_t* done) {
  std::fill(done, done + count, uint8_t{0});
  if (!group_run_supported(cfg) || row.special || ops.p_specials != 0) return;
  TESSERA_CHECK(row.lanes == cfg.lanes && row.live_count.size() >= static_cast<size_t>(steps),
                "group_runs_avx2: serial row prepared for another shape");
  constexpr int kChunk = 16;
  thread_local std::vector<int> slowest;
  slowest.resize(static_cast<size_t>(kChunk) * steps);
  std::array<Run, kChunk> runs;  // every field is set before use (no zeroing per row)
  std::array<int, kChunk> index;
  const auto& from = terms_from();
  for (int first = 0; first < count;) {
    int n = 0;
    for (; first < count && n < kChunk; ++first) {
      const RowGroup& rg = groups[first];
      TESSERA_CHECK(rg.valid >= 1 && rg.valid <= kGroupPes, "group_runs_avx2: bad group");
      if (rg.group < 0 || ops.packed.size() < static_cast<size_t>(rg.group + 1) * ops.kp * kGroupPes) continue;
      Run& r = runs[static_cast<size_t>(n)];
      r.cfg = &cfg;
      r.terms_from = &from;
      r.packed = ops.packed.data() + static_cast<size_t>(rg.group) * ops.kp * kGroupPes;
      r.slowest = slowest.data() + static_cast<size_t>(n) * steps;
      r.valid = _mm256_cmpgt_epi32(_mm256_set1_epi32(rg.valid), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
      r.exponent_max = r.processed_acc = r.nonzero_acc = r.cycle_acc = _mm256_setzero_si256();
      r.uniform_processed = r.uniform_cycles = 0;
      if (!load(r, rg.out, rg.stride, rg.valid)) continue;
      index[static_cast<size_t>(n++)] = first;
    }
    if (cfg.acc_fraction_bits == kFullWidth) run_steps<true>(runs.data(), n, steps, row);
    else run_steps<false>(runs.data(), n, steps, row);
    for (int i = 0; i < n; ++i) {
      const RowGroup& rg = groups[index[static_cast<size_t>(i)]];
      if (!store(runs[static_cast<size_t>(i)], rg.out, rg.stride, rg.valid)) continue;
      finish(runs[static_cast<size_t>(i)], rg.valid, steps, rg.step_max, totals);
      done[index[static_cast<size_t>(i)]] = 1;
    }
  }
}

#else

bool group_run_supported(const PeConfig&) { return false; }

void group_runs_avx2(const PeConfig&, const TileOperands&, const SerialSteps&, int, const RowGroup*, int count,
                     GroupTotals&, uint8_t* done) {
  std::fill(done, done + count, uint8_t{0});
}

#endif

}  // namespace tessera::numerics::detail
