// The vector tile's step-by-step path, AVX2 only (tile.h): group_steps_avx2 and
// row_group_steps_avx2, with the lockstep (exact-product) step, the general vector step, and the
// scalar fast_step for steps with Inf/NaN.
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <new>

#include "common/error.h"
#include "numerics/term_pe/simd_ops.h"
#include "numerics/term_pe/tile.h"

#if defined(__x86_64__)
#define TESSERA_SIMD_TARGET __attribute__((target("avx2")))
#include "numerics/term_pe/simd_lane_ops.h"
#endif

namespace tessera::numerics::detail {

#if defined(__x86_64__)

namespace {

// The accumulators of a group as vectors (finite state only; Inf/NaN make the group scalar).
struct VectorAcc {
  __m256i exponent, significand, negative, zero;  // negative, zero: all-ones masks
};

__attribute__((target("avx2"))) VectorAcc to_vectors(
    const std::array<PeAccumulator, kGroupPes>& st) {
  alignas(32) int32_t e[kGroupPes], s[kGroupPes], n[kGroupPes], z[kGroupPes];
  for (int v = 0; v < kGroupPes; ++v) {
    const bool finite = st[v].kind == PeAccumulator::Kind::Finite;
    e[v] = finite ? st[v].exponent : 0;
    s[v] = finite ? static_cast<int32_t>(st[v].significand) : 0;
    n[v] = st[v].negative ? -1 : 0;
    z[v] = finite ? 0 : -1;
  }
  return VectorAcc{ld(e), ld(s), ld(n), ld(z)};
}

__attribute__((target("avx2"))) void from_vectors(const VectorAcc& va,
                                                  std::array<PeAccumulator, kGroupPes>& st) {
  alignas(32) int32_t e[kGroupPes], s[kGroupPes], n[kGroupPes], z[kGroupPes];
  _mm256_store_si256(reinterpret_cast<__m256i*>(e), va.exponent);
  _mm256_store_si256(reinterpret_cast<__m256i*>(s), va.significand);
  _mm256_store_si256(reinterpret_cast<__m256i*>(n), va.negative);
  _mm256_store_si256(reinterpret_cast<__m256i*>(z), va.zero);
  for (int v = 0; v < kGroupPes; ++v) {
    st[v] = z[v] != 0 ? PeAccumulator{PeAccumulator::Kind::Zero, n[v] != 0, 0, 0}
                      : PeAccumulator{PeAccumulator::Kind::Finite, n[v] != 0, e[v],
                                      static_cast<uint32_t>(s[v])};
  }
}

struct GroupContext {
  const PeConfig& cfg;
  const TileOperands& ops;
  int s, x0, valid, steps;
};

// One step of every valid PE of the group through the scalar fast_step: PE v's cycles into
// pe_cycles[v] (entries beyond valid untouched). Returns the cycles sum.
int64_t scalar_step(const GroupContext& g, int j, std::array<PeAccumulator, kGroupPes>& st,
                    int* pe_cycles, int64_t& processed, int64_t& nonzero) {
  const int L = g.cfg.lanes;
  const int64_t k0 = int64_t{j} * L;
  std::array<TermOperand, kMaxPeLanes> a;
  std::array<LaneTerms, kMaxPeLanes> lanes;
  int64_t cycle_sum = 0;
  for (int v = 0; v < g.valid; ++v) {
    for (int i = 0; i < L; ++i)
      a[i] = g.ops.p_ops[static_cast<size_t>(k0 + i) * g.ops.xp + g.x0 + v];
    const TermOperand* b = &g.ops.s_ops[static_cast<size_t>(g.s) * g.ops.kp + k0];
    const int c = std::max(fast_step<int64_t>(g.cfg, a.data(), b, L, st[v], lanes.data()),
                           g.cfg.min_step_cycles);
    for (int i = 0; i < L; ++i) {
      processed += lanes[i].processed;
      nonzero += lanes[i].processed + lanes[i].skipped_oob;
    }
    pe_cycles[v] = c;
    cycle_sum += c;
  }
  return cycle_sum;
}

// Normalises the window sums `sum` (units 2^(E - W)) into the accumulators (contract step 5);
// returns the mask of accumulators that overflowed (left as garbage: the caller makes them Inf).
__attribute__((target("avx2"))) __m256i normalise(__m256i sum, __m256i E, __m256i zero_negative,
                                                  const PeConfig& cfg, VectorAcc& acc) {
  const __m256i nonzero =
      _mm256_xor_si256(_mm256_cmpeq_epi32(sum, _mm256_setzero_si256()), _mm256_set1_epi32(-1));
  __m256i q, s;
  round_to_width<Avx2Ops>(_mm256_abs_epi32(sum), cfg.acc_fraction_bits, q, s);
  const __m256i exponent = _mm256_add_epi32(E, s);
  acc.negative = _mm256_blendv_epi8(zero_negative, _mm256_srai_epi32(sum, 31), nonzero);
  acc.zero = _mm256_xor_si256(nonzero, _mm256_set1_epi32(-1));
  acc.exponent = _mm256_and_si256(exponent, nonzero);
  acc.significand = _mm256_and_si256(q, nonzero);
  return _mm256_and_si256(_mm256_cmpgt_epi32(exponent, _mm256_set1_epi32(cfg.acc_max_exponent)),
                          nonzero);
}

// Normalisation at W = 23: converting the magnitude (< 2^31) to fp32 rounds it to nearest even to
// 24 significant bits, which is exactly step 5's rounding; the float's fields give sig and lead.
__attribute__((target("avx2"))) __m256i normalise_w23(__m256i sum, __m256i E, const PeConfig& cfg,
                                                      VectorAcc& acc) {
  const __m256i nonzero =
      _mm256_xor_si256(_mm256_cmpeq_epi32(sum, _mm256_setzero_si256()), _mm256_set1_epi32(-1));
  const __m256i bits = _mm256_castps_si256(_mm256_cvtepi32_ps(_mm256_abs_epi32(sum)));
  const __m256i q = _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x7fffff)),
                                    _mm256_set1_epi32(0x800000));
  const __m256i exponent = _mm256_add_epi32(
      E, _mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(127 + 23)));
  acc.negative = _mm256_srai_epi32(sum, 31);
  acc.zero = _mm256_xor_si256(nonzero, _mm256_set1_epi32(-1));
  acc.exponent = _mm256_and_si256(exponent, nonzero);
  acc.significand = _mm256_and_si256(q, nonzero);
  return _mm256_and_si256(_mm256_cmpgt_epi32(exponent, _mm256_set1_epi32(cfg.acc_max_exponent)),
                          nonzero);
}

// Per-group constants and the counters the steps add to.
struct GroupRun {
  const PeConfig& cfg;
  const TileOperands& ops;
  const SerialSteps& row;
  const TermOperand* s_ops;
  const int32_t* s_code;
  const int32_t *p_code, *p_word, *packed;
  __m256i valid_mask;
  __m256i processed_acc = _mm256_setzero_si256(), nonzero_acc = _mm256_setzero_si256();
  unsigned valid_bits = 0;  // bit v set for v < valid
  int64_t uniform_processed =
      0;  // per PE, over the uniform lockstep steps (every valid PE the same)
};

// E of every PE of the group (step 1), from the maximum product code over the lanes.
__attribute__((target("avx2"))) inline __m256i window_exponent(const PeConfig& cfg, __m256i pe_max,
                                                               __m256i live_floor,
                                                               const VectorAcc& va,
                                                               __m256i& any_live) {
  any_live = _mm256_cmpgt_epi32(pe_max, live_floor);
  const __m256i finite = _mm256_xor_si256(va.zero, _mm256_set1_epi32(-1));
  __m256i E = _mm256_blendv_epi8(va.exponent, pe_max, any_live);
  E = _mm256_blendv_epi8(E, _mm256_max_epi32(E, va.exponent), finite);
  if (cfg.fixed_exponent_mode) E = _mm256_max_epi32(E, _mm256_set1_epi32(cfg.fixed_exponent));
  return E;
}

// The term loop of lane i (B = b, its terms tl) for every PE of the group: the lane's signed value
// in window units (each term truncated, out-of-bounds ones giving 0 by the shift) and its
// processed terms. q = E + 32 - W - pe; ma18 = ma << 18; a_negative: all-ones where A < 0.
__attribute__((target("avx2"))) inline __m256i lane_terms(const TermList& tl, __m256i q,
                                                          __m256i ma18, __m256i a_negative,
                                                          bool b_negative,
                                                          __m256i& lane_processed) {
  const __m256i bound = _mm256_set1_epi32(26);
  __m256i lane_value = _mm256_setzero_si256();
  lane_processed = _mm256_setzero_si256();
  for (int t = 0; t < tl.count; ++t) {
    const __m256i amount = _mm256_sub_epi32(q, _mm256_set1_epi32(tl.terms[t].power));
    lane_value = _mm256_add_epi32(
        lane_value,
        _mm256_sign_epi32(_mm256_srlv_epi32(ma18, amount), _mm256_set1_epi32(tl.terms[t].sign)));
    lane_processed = _mm256_sub_epi32(lane_processed, _mm256_cmpgt_epi32(bound, amount));
  }
  const __m256i lane_negative =
      _mm256_xor_si256(a_negative, _mm256_set1_epi32(b_negative ? -1 : 0));
  return _mm256_sub_epi32(_mm256_xor_si256(lane_value, lane_negative), lane_negative);
}

// Every significand's CSD terms padded to kMaxTerms with a term that is out of reach (its shift
// amount is >= 32, so it adds 0 and is not counted): a fixed-length term loop without branches.
struct PaddedTerms {
  int32_t power[kMaxTerms];
  int32_t sign[kMaxTerms];
};

const std::array<PaddedTerms, 256>& padded_terms() {
  static const std::array<PaddedTerms, 256> table = [] {
    std::array<PaddedTerms, 256> t{};
    for (int m = 0; m < 256; ++m) {
      const TermList& tl = csd_table()[m];
      for (int i = 0; i < kMaxTerms; ++i) {
        t[m].power[i] = i < tl.count ? tl.terms[i].power : -64;
        t[m].sign[i] = i < tl.count ? tl.terms[i].sign : 0;
      }
    }
    return t;
  }();
  return table;
}

// A lane's truncated terms for the PEs in `mask` (all-ones where g < 0): sum over B's CSD terms
// (padded to kMaxTerms, branch-free) of s * trunc(ma * 2^(p - h)) = s * ((ma << 18) >> (h + 18 -
// p)), h = -g <= 15, with the lane's sign, masked.
__attribute__((target("avx2"))) inline __m256i truncated_lane(const SerialSteps::LiveB& b,
                                                              __m256i word, __m256i h,
                                                              __m256i mask) {
  const PaddedTerms& pt = padded_terms()[b.significand];
  const __m256i ma18 =
      _mm256_slli_epi32(_mm256_abs_epi16(word), 18);  // the exponent half shifts out
  const __m256i q = _mm256_add_epi32(h, _mm256_set1_epi32(18));
  __m256i value = _mm256_setzero_si256();
#pragma GCC unroll 5
  for (int t = 0; t < kMaxTerms; ++t)
    value = _mm256_add_epi32(
        value, _mm256_sign_epi32(
                   _mm256_srlv_epi32(ma18, _mm256_sub_epi32(q, _mm256_set1_epi32(pt.power[t]))),
                   _mm256_set1_epi32(pt.sign[t])));
  const __m256i negative = _mm256_xor_si256(_mm256_srai_epi32(_mm256_slli_epi32(word, 16), 31),
                                            _mm256_set1_epi32(-int32_t{b.negative}));
  return _mm256_and_si256(_mm256_sub_epi32(_mm256_xor_si256(value, negative), negative), mask);
}

// What the groups of a row share in step j of the lockstep steps: per live lane its B, the packed
// offset of its k, and its exponents as vectors; the step's cycles and terms when uniform.
struct StepPrep {
  int live = 0, cycles = 0, count_sum = 0;
  const SerialSteps::LiveB* b = nullptr;
  int32_t k[kMaxPeLanes];
  __m256i biased[kMaxPeLanes], oob[kMaxPeLanes], significand[kMaxPeLanes];
};

__attribute__((target("avx2"))) inline void prepare_step(const SerialSteps& row,
                                                         const PeConfig& cfg, int j, StepPrep& p) {
  const int L = cfg.lanes;
  p.live = row.live_count[static_cast<size_t>(j)];
  p.b = &row.live[static_cast<size_t>(j) * L];
  p.cycles = std::max<int>(row.max_count[static_cast<size_t>(j)], cfg.min_step_cycles);
  p.count_sum = row.count_sum[static_cast<size_t>(j)];
  for (int t = 0; t < p.live; ++t) {
    p.k[t] = j * L + p.b[t].lane;
    p.biased[t] = _mm256_set1_epi32(p.b[t].biased_exponent);
    p.oob[t] = _mm256_set1_epi32(p.b[t].oob_exponent);
    p.significand[t] = _mm256_set1_epi32(p.b[t].signed_significand);
  }
}

// Live lane t's packed parallel word in every PE of the group.
__attribute__((target("avx2"))) inline __m256i word_at(const GroupRun& r, const StepPrep& p,
                                                       int t) {
  return ld(r.packed + static_cast<ptrdiff_t>(p.k[t]) * kGroupPes);
}

// One lockstep step: no Inf/NaN operand and no -0 accumulator in the group. Exponents are biased by
// kExponentBias, so that a zero parallel operand (negative) drops out of the signed maximum and
// the unsigned minima.
// - Values: lane t of PE v adds its exact product << g (g = pe - (E - (W - 14))) if g >= 0 (every
//   term in bounds and exact), else its truncated terms (truncated_lane).
// - Timing: a term is out of bounds only if h = -g > 7 + (its B's lowest term power). If no live
//   lane of a valid PE can have one, every live lane processes all its terms, so a PE's cycles
//   are the most terms of a live B over its lanes with a non-zero A: the row's max_count when no A
//   of a live lane is zero ("uniform" step), else per PE; otherwise the processed terms are
//   counted per lane (processed_terms).
// Returns the PEs' cycles (0 beyond valid) in c, their maximum in slowest.
__attribute__((target("avx2"), always_inline)) inline void row_lockstep_step(
    GroupRun& r, const StepPrep& p, VectorAcc& va, __m256i& overflow, __m256i& c, int& slowest) {
  const PeConfig& cfg = r.cfg;
  const int W = cfg.acc_fraction_bits;
  const int live = p.live;
  __m256i pe[kMaxPeLanes], word[kMaxPeLanes];
  __m256i pe_max = _mm256_setzero_si256(), pe_min = _mm256_set1_epi32(-1),
          oob_min = _mm256_set1_epi32(-1);
  __m256i signed_min = _mm256_set1_epi32(INT32_MAX);  // negative where a live lane's A is zero
  for (int t = 0; t < live; ++t) {
    word[t] = word_at(r, p, t);
    const __m256i ea = _mm256_srai_epi32(word[t], 16);
    pe[t] = _mm256_add_epi32(ea, p.biased[t]);
    pe_max = _mm256_max_epi32(pe_max, pe[t]);
    pe_min = _mm256_min_epu32(pe_min, pe[t]);
    oob_min = _mm256_min_epu32(oob_min, _mm256_add_epi32(ea, p.oob[t]));
    signed_min = _mm256_min_epi32(signed_min, pe[t]);
  }
  const __m256i finite = _mm256_xor_si256(va.zero, _mm256_set1_epi32(-1));
  __m256i E = _mm256_max_epi32(
      pe_max,
      _mm256_and_si256(_mm256_add_epi32(va.exponent, _mm256_set1_epi32(kExponentBias)), finite));
  if (cfg.fixed_exponent_mode)
    E = _mm256_max_epi32(E, _mm256_set1_epi32(cfg.fixed_exponent + kExponentBias));
  const __m256i gbase = _mm256_sub_epi32(E, _mm256_set1_epi32(W - 14));
  __m256i value = _mm256_setzero_si256();
  for (int t = 0; t < live; ++t) {
    // madd: the word's high half (the exponent) meets B's zero high half; g < 0 shifts out all.
    value = _mm256_add_epi32(value, _mm256_sllv_epi32(_mm256_madd_epi16(word[t], p.significand[t]),
                                                      _mm256_sub_epi32(pe[t], gbase)));
  }
  // In bounds everywhere iff oob_min >= E - (W - 7) (unsigned) in every valid PE.
  const __m256i oob_limit = _mm256_sub_epi32(E, _mm256_set1_epi32(W - 7));
  const __m256i in_bounds = _mm256_cmpeq_epi32(_mm256_max_epu32(oob_min, oob_limit), oob_min);
  const __m256i oob = _mm256_andnot_si256(in_bounds, r.valid_mask);
  const bool maybe_oob = !_mm256_testz_si256(oob, oob);
  const __m256i exact = _mm256_cmpeq_epi32(_mm256_max_epu32(pe_min, gbase), pe_min);
  const __m256i truncated = _mm256_andnot_si256(exact, r.valid_mask);
  if (!_mm256_testz_si256(truncated, truncated)) {
    // Sign bit of m[t]: a valid PE whose A is non-zero (pe > 0) and whose product is truncated
    // (g < 0). The lanes to visit as bits, then visited without a branch per lane.
    __m256i m[kMaxPeLanes];
    uint64_t lanes = 0;
    for (int t = 0; t < live; ++t) {
      m[t] = _mm256_and_si256(_mm256_andnot_si256(pe[t], _mm256_sub_epi32(pe[t], gbase)),
                              r.valid_mask);
      lanes |= uint64_t{_mm256_movemask_ps(_mm256_castsi256_ps(m[t])) != 0} << t;
    }
    for (; lanes != 0; lanes &= lanes - 1) {
      const int t = std::countr_zero(lanes);
      value =
          _mm256_add_epi32(value, truncated_lane(p.b[t], word[t], _mm256_sub_epi32(gbase, pe[t]),
                                                 _mm256_srai_epi32(m[t], 31)));
    }
  }
  const __m256i E_unbiased = _mm256_sub_epi32(E, _mm256_set1_epi32(kExponentBias));
  const __m256i aligned = _mm256_and_si256(
      _mm256_srlv_epi32(va.significand, _mm256_sub_epi32(E_unbiased, va.exponent)), finite);
  const __m256i sum = _mm256_add_epi32(
      value, _mm256_sub_epi32(_mm256_xor_si256(aligned, va.negative), va.negative));
  overflow = _mm256_and_si256(W == 23 ? normalise_w23(sum, E_unbiased, cfg, va)
                                      : normalise(sum, E_unbiased, _mm256_setzero_si256(), cfg, va),
                              r.valid_mask);
  // Timing: without out-of-bounds terms every live lane processes all its terms.
  const __m256i zero_a = _mm256_and_si256(signed_min, r.valid_mask);
  if (!maybe_oob && _mm256_movemask_ps(_mm256_castsi256_ps(zero_a)) == 0) {
    slowest = p.cycles;
    c = _mm256_and_si256(_mm256_set1_epi32(slowest), r.valid_mask);
    r.uniform_processed += p.count_sum;
    return;
  }
  __m256i proc_max = _mm256_setzero_si256(), processed = _mm256_setzero_si256(),
          nonzero = _mm256_setzero_si256();
  for (int t = 0; t < live; ++t) {
    const __m256i count = _mm256_and_si256(_mm256_cmpgt_epi32(pe[t], _mm256_setzero_si256()),
                                           _mm256_set1_epi32(p.b[t].count));
    const __m256i lane =
        maybe_oob ? processed_terms<Avx2Ops>(terms_from(), p.b[t], pe[t], gbase) : count;
    proc_max = _mm256_max_epi32(proc_max, lane);
    processed = _mm256_add_epi32(processed, lane);
    nonzero = _mm256_add_epi32(nonzero, count);
  }
  r.nonzero_acc = _mm256_add_epi32(r.nonzero_acc, _mm256_and_si256(nonzero, r.valid_mask));
  r.processed_acc = _mm256_add_epi32(r.processed_acc, _mm256_and_si256(processed, r.valid_mask));
  c = _mm256_and_si256(_mm256_max_epi32(proc_max, _mm256_set1_epi32(cfg.min_step_cycles)),
                       r.valid_mask);
  slowest = hmax(c);
}

// One step of the general vector path (any operands but Inf/NaN, -0 accumulators included).
__attribute__((target("avx2"))) __m256i general_step(GroupRun& r, int j, VectorAcc& va,
                                                     __m256i& overflow) {
  const PeConfig& cfg = r.cfg;
  const int W = cfg.acc_fraction_bits, L = cfg.lanes;
  const size_t xp = static_cast<size_t>(r.ops.xp);
  const int64_t k0 = int64_t{j} * L;
  const auto& table = csd_table();
  __m256i pe_max = _mm256_set1_epi32(2 * kZeroCode);
  for (int i = 0; i < L; ++i)
    pe_max = _mm256_max_epi32(pe_max, _mm256_add_epi32(ld(r.p_code + (k0 + i) * xp),
                                                       _mm256_set1_epi32(r.s_code[k0 + i])));
  const __m256i live_floor = _mm256_set1_epi32(-(1 << 19));
  __m256i any_live;
  const __m256i E = window_exponent(cfg, pe_max, live_floor, va, any_live);
  const __m256i base = _mm256_add_epi32(E, _mm256_set1_epi32(32 - W));
  __m256i value = _mm256_setzero_si256(), proc_max = _mm256_setzero_si256();
  __m256i all_negative = _mm256_set1_epi32(-1);
  for (int i = 0; i < L; ++i) {
    const TermOperand b = r.s_ops[k0 + i];
    const __m256i wa = ld(r.p_word + (k0 + i) * xp);
    all_negative = _mm256_and_si256(
        all_negative,
        _mm256_srai_epi32(_mm256_xor_si256(wa, _mm256_set1_epi32(b.negative() ? INT32_MIN : 0)),
                          31));
    if (b.cls() != Bf16Class::Finite) continue;  // a zero B: no terms
    const TermList& tl = table[b.significand];
    const __m256i pe =
        _mm256_add_epi32(ld(r.p_code + (k0 + i) * xp), _mm256_set1_epi32(b.exponent));
    __m256i lane_processed;
    value = _mm256_add_epi32(value,
                             lane_terms(tl, _mm256_sub_epi32(base, pe),
                                        _mm256_and_si256(wa, _mm256_set1_epi32(0x7fffffff)),
                                        _mm256_srai_epi32(wa, 31), b.negative(), lane_processed));
    proc_max = _mm256_max_epi32(proc_max, lane_processed);
    r.processed_acc =
        _mm256_add_epi32(r.processed_acc, _mm256_and_si256(lane_processed, r.valid_mask));
    const __m256i live = _mm256_cmpgt_epi32(pe, live_floor);
    r.nonzero_acc = _mm256_add_epi32(
        r.nonzero_acc,
        _mm256_and_si256(_mm256_set1_epi32(tl.count), _mm256_and_si256(live, r.valid_mask)));
  }
  const __m256i finite = _mm256_xor_si256(va.zero, _mm256_set1_epi32(-1));
  const __m256i aligned =
      _mm256_and_si256(_mm256_srlv_epi32(va.significand, _mm256_sub_epi32(E, va.exponent)), finite);
  const __m256i sum = _mm256_add_epi32(
      value, _mm256_sub_epi32(_mm256_xor_si256(aligned, va.negative), va.negative));
  const __m256i zero_negative = _mm256_andnot_si256(
      any_live, _mm256_and_si256(_mm256_and_si256(va.zero, va.negative), all_negative));
  overflow = _mm256_and_si256(normalise(sum, E, zero_negative, cfg, va), r.valid_mask);
  return _mm256_and_si256(_mm256_max_epi32(proc_max, _mm256_set1_epi32(cfg.min_step_cycles)),
                          r.valid_mask);
}

// One group between steps: its run constants, accumulators (vectors, or scalar after Inf/NaN) and
// counters.
struct GroupState {
  GroupRun r;
  int s, x0, valid, steps;
  bool exact_products, scalar_mode = false;
  VectorAcc va{};
  std::array<PeAccumulator, kGroupPes> st{};
  int64_t processed = 0, nonzero = 0, cycle_sum = 0;  // of the scalar steps
  __m256i cycle_acc = _mm256_setzero_si256();
};

__attribute__((target("avx2"))) GroupRun make_run(const PeConfig& cfg, const TileOperands& ops,
                                                  const SerialSteps& row, int s, int x0, int group,
                                                  int valid) {
  TESSERA_CHECK(valid >= 1 && valid <= kGroupPes && tile_avx2_supported(cfg),
                "group_steps_avx2: bad group");
  TESSERA_CHECK(
      group < 0 || ops.packed.size() >= static_cast<size_t>(group + 1) * ops.kp * kGroupPes,
      "group_steps_avx2: operands not packed for this group");
  GroupRun run{
      cfg,
      ops,
      row,
      ops.s_ops.data() + static_cast<size_t>(s) * ops.kp,
      ops.s_code.data() + static_cast<size_t>(s) * ops.kp,
      ops.p_code.data() + x0,
      ops.p_word.data() + x0,
      group >= 0 ? ops.packed.data() + static_cast<size_t>(group) * ops.kp * kGroupPes : nullptr,
      _mm256_cmpgt_epi32(_mm256_set1_epi32(valid), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))};
  run.valid_bits = (1u << valid) - 1;
  return run;
}

__attribute__((target("avx2"))) void start_group(GroupState& g, const PeAccumulator* acc_in) {
  for (int v = 0; v < kGroupPes; ++v) {
    g.st[v] = v < g.valid ? acc_in[v] : PeAccumulator{};
    g.scalar_mode = g.scalar_mode || g.st[v].kind == PeAccumulator::Kind::Inf ||
                    g.st[v].kind == PeAccumulator::Kind::NaN;
  }
  g.va = to_vectors(g.st);
}

// Step j of the group: per-PE cycles into cycles[0..8) if non-null; step_max[j] raised to the
// slowest valid PE's cycles if step_max is non-null. `prep`: step j of the row prepared
// (prepare_step), or null.
__attribute__((target("avx2"))) inline void group_step(GroupState& g, int j, int* cycles,
                                                       int* step_max, const StepPrep* prep) {
  using Kind = PeAccumulator::Kind;
  GroupRun& r = g.r;
  const PeConfig& cfg = r.cfg;
  const int L = cfg.lanes;
  bool special = g.scalar_mode;
  if (!g.exact_products && !special) {
    const int64_t k0 = int64_t{j} * L;
    __m256i code_max = _mm256_set1_epi32(2 * kZeroCode);
    for (int i = 0; i < L; ++i)
      code_max = _mm256_max_epi32(code_max, _mm256_add_epi32(ld(r.p_code + (k0 + i) * r.ops.xp),
                                                             _mm256_set1_epi32(r.s_code[k0 + i])));
    const __m256i sp = _mm256_and_si256(
        _mm256_cmpgt_epi32(code_max, _mm256_set1_epi32((1 << 19) - 1)), r.valid_mask);
    special = !_mm256_testz_si256(sp, sp);
  }
  if (special) {
    if (!g.scalar_mode) from_vectors(g.va, g.st);
    std::array<int, kGroupPes> pe_cycles{};
    g.cycle_sum += scalar_step(GroupContext{cfg, r.ops, g.s, g.x0, g.valid, g.steps}, j, g.st,
                               pe_cycles.data(), g.processed, g.nonzero);
    if (cycles != nullptr) std::copy(pe_cycles.begin(), pe_cycles.end(), cycles);
    if (step_max != nullptr)
      step_max[j] = std::max(step_max[j], *std::max_element(pe_cycles.begin(), pe_cycles.end()));
    g.scalar_mode = std::any_of(g.st.begin(), g.st.end(), [](const PeAccumulator& a) {
      return a.kind == Kind::Inf || a.kind == Kind::NaN;
    });
    if (!g.scalar_mode) g.va = to_vectors(g.st);
    return;
  }
  const __m256i negative_zero =
      _mm256_and_si256(_mm256_and_si256(g.va.zero, g.va.negative), r.valid_mask);
  __m256i overflow, c;
  int slowest = -1;
  if (g.exact_products && _mm256_testz_si256(negative_zero, negative_zero)) {
    if (prep != nullptr) {
      row_lockstep_step(r, *prep, g.va, overflow, c, slowest);
    } else {
      StepPrep own;
      prepare_step(g.r.row, cfg, j, own);
      row_lockstep_step(r, own, g.va, overflow, c, slowest);
    }
  } else {
    c = general_step(r, j, g.va, overflow);
  }
  if (cycles != nullptr) _mm256_storeu_si256(reinterpret_cast<__m256i*>(cycles), c);
  if (step_max != nullptr) step_max[j] = std::max(step_max[j], slowest >= 0 ? slowest : hmax(c));
  g.cycle_acc = _mm256_add_epi32(g.cycle_acc, c);
  if (!_mm256_testz_si256(overflow, overflow)) {
    alignas(32) int32_t o[kGroupPes];
    _mm256_store_si256(reinterpret_cast<__m256i*>(o), overflow);
    from_vectors(g.va, g.st);
    for (int v = 0; v < kGroupPes; ++v)
      if (o[v] != 0) g.st[v] = PeAccumulator{Kind::Inf, g.st[v].negative, 0, 0};
    g.scalar_mode = true;
  }
}

// Adds the group's counters to totals and, if acc_out is non-null, writes its accumulators.
__attribute__((target("avx2"))) void finish_group(GroupState& g, PeAccumulator* acc_out,
                                                  GroupTotals& totals) {
  const int64_t cycle_sum = g.cycle_sum + hsum(g.cycle_acc);
  const int64_t uniform = g.r.uniform_processed * g.valid;
  const int64_t processed = g.processed + hsum(g.r.processed_acc) + uniform;
  const int64_t nonzero = g.nonzero + hsum(g.r.nonzero_acc) + uniform;
  totals.add_group(cycle_sum, processed, nonzero, g.steps, g.valid, g.r.cfg.lanes);
  if (acc_out == nullptr) return;
  if (!g.scalar_mode) from_vectors(g.va, g.st);
  for (int v = 0; v < g.valid; ++v) acc_out[v] = g.st[v];
}

// At W = 23, an fp32 normal number or +0 is exactly an accumulator (accumulator_from_f32): its
// exponent and significand with the hidden bit. Loads in[v * stride] (v < valid; +0 beyond) into
// the vectors; false (nothing changed) if some value is not such a number or lies above
// acc_max_exponent.
__attribute__((target("avx2"))) bool load_f32(GroupState& g, const float* in, int stride) {
  if (g.r.cfg.acc_fraction_bits != 23) return false;
  alignas(32) int32_t b[kGroupPes] = {};
  for (int v = 0; v < g.valid; ++v)
    std::memcpy(&b[v], &in[static_cast<ptrdiff_t>(v) * stride], sizeof(float));
  const __m256i bits = ld(b);
  const __m256i biased = _mm256_and_si256(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(0xff));
  const __m256i zero = _mm256_cmpeq_epi32(bits, _mm256_setzero_si256());
  const __m256i normal = _mm256_and_si256(
      _mm256_cmpgt_epi32(biased, _mm256_setzero_si256()),
      _mm256_cmpgt_epi32(_mm256_set1_epi32(std::min(g.r.cfg.acc_max_exponent, 127) + 128), biased));
  const __m256i bad = _mm256_andnot_si256(_mm256_or_si256(zero, normal), _mm256_set1_epi32(-1));
  if (!_mm256_testz_si256(bad, bad)) return false;
  const __m256i nonzero = _mm256_andnot_si256(zero, _mm256_set1_epi32(-1));
  g.va.exponent = _mm256_and_si256(_mm256_sub_epi32(biased, _mm256_set1_epi32(127)), nonzero);
  g.va.significand =
      _mm256_and_si256(_mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x7fffff)),
                                       _mm256_set1_epi32(0x800000)),
                       nonzero);
  g.va.negative = _mm256_srai_epi32(bits, 31);
  g.va.zero = zero;
  return true;
}

// The inverse at W = 23 (accumulator_to_f32 of an accumulator in fp32's normal range is exact):
// writes out[v * stride] for v < valid; false (nothing written) if some accumulator is Inf/NaN or
// outside fp32's normal range.
__attribute__((target("avx2"))) bool store_f32(const GroupState& g, float* out, int stride) {
  if (g.r.cfg.acc_fraction_bits != 23 || g.scalar_mode) return false;
  const __m256i finite = _mm256_andnot_si256(g.va.zero, _mm256_set1_epi32(-1));
  const __m256i biased = _mm256_add_epi32(g.va.exponent, _mm256_set1_epi32(127));
  const __m256i in_range = _mm256_and_si256(_mm256_cmpgt_epi32(biased, _mm256_setzero_si256()),
                                            _mm256_cmpgt_epi32(_mm256_set1_epi32(255), biased));
  const __m256i bad = _mm256_andnot_si256(in_range, finite);
  if (!_mm256_testz_si256(bad, bad)) return false;
  const __m256i magnitude =
      _mm256_or_si256(_mm256_slli_epi32(biased, 23),
                      _mm256_and_si256(g.va.significand, _mm256_set1_epi32(0x7fffff)));
  const __m256i bits =
      _mm256_or_si256(_mm256_and_si256(magnitude, finite),
                      _mm256_and_si256(g.va.negative, _mm256_set1_epi32(INT32_MIN)));
  alignas(32) int32_t b[kGroupPes];
  _mm256_store_si256(reinterpret_cast<__m256i*>(b), bits);
  for (int v = 0; v < g.valid; ++v)
    std::memcpy(&out[static_cast<ptrdiff_t>(v) * stride], &b[v], sizeof(float));
  return true;
}

void check_row(const PeConfig& cfg, const SerialSteps& row, int steps) {
  TESSERA_CHECK(row.lanes == cfg.lanes && row.live_count.size() >= static_cast<size_t>(steps),
                "group_steps_avx2: serial row prepared for another shape");
}

}  // namespace

__attribute__((target("avx2"))) void group_steps_avx2(const PeConfig& cfg, const TileOperands& ops,
                                                      const SerialSteps& row, int s, int x0,
                                                      int group, int valid, int steps,
                                                      PeAccumulator* acc_io, int* cycles,
                                                      GroupTotals& totals, int* step_max) {
  check_row(cfg, row, steps);
  GroupState g{make_run(cfg, ops, row, s, x0, group, valid),     s, x0, valid, steps,
               group >= 0 && !row.special && ops.p_specials == 0};
  start_group(g, acc_io);
  for (int j = 0; j < steps; ++j)
    group_step(g, j, cycles != nullptr ? cycles + static_cast<size_t>(j) * kGroupPes : nullptr,
               step_max, nullptr);
  finish_group(g, acc_io, totals);
}

__attribute__((target("avx2"))) void row_group_steps_avx2(const PeConfig& cfg,
                                                          const TileOperands& ops,
                                                          const SerialSteps& row, int s, int steps,
                                                          const RowGroup* groups, int count,
                                                          GroupTotals& totals) {
  check_row(cfg, row, steps);
  const bool exact_products = !row.special && ops.p_specials == 0;
  // Up to kRowChunk groups at a time, their states on the stack (placement new: GroupState holds
  // references; it is trivially destructible).
  constexpr int kRowChunk = 16;
  alignas(GroupState) unsigned char storage[kRowChunk * sizeof(GroupState)];
  auto* states = reinterpret_cast<GroupState*>(storage);
  std::array<PeAccumulator, kGroupPes> accs;
  for (int first = 0; first < count; first += kRowChunk) {
    const int n = std::min(kRowChunk, count - first);
    for (int i = 0; i < n; ++i) {
      const RowGroup& rg = groups[first + i];
      new (&states[i]) GroupState{make_run(cfg, ops, row, s, rg.x0, rg.group, rg.valid),
                                  s,
                                  rg.x0,
                                  rg.valid,
                                  steps,
                                  rg.group >= 0 && exact_products};
      if (load_f32(states[i], rg.out, rg.stride)) continue;
      for (int v = 0; v < rg.valid; ++v)
        accs[v] = accumulator_from_f32(rg.out[static_cast<ptrdiff_t>(v) * rg.stride], cfg);
      start_group(states[i], accs.data());
    }
    StepPrep prep;
    for (int j = 0; j < steps; ++j) {
      prepare_step(row, cfg, j, prep);
      for (int i = 0; i < n; ++i)
        group_step(states[i], j, nullptr, groups[first + i].step_max, &prep);
    }
    for (int i = 0; i < n; ++i) {
      const RowGroup& rg = groups[first + i];
      const bool stored = store_f32(states[i], rg.out, rg.stride);
      finish_group(states[i], stored ? nullptr : accs.data(), totals);
      if (!stored)
        for (int v = 0; v < rg.valid; ++v)
          rg.out[static_cast<ptrdiff_t>(v) * rg.stride] = accumulator_to_f32(accs[v], cfg);
    }
  }
}

#else

void group_steps_avx2(const PeConfig&, const TileOperands&, const SerialSteps&, int, int, int, int,
                      int, PeAccumulator*, int*, GroupTotals&, int*) {
  TESSERA_CHECK(false, "group_steps_avx2: no AVX2 on this host");
}

void row_group_steps_avx2(const PeConfig&, const TileOperands&, const SerialSteps&, int, int,
                          const RowGroup*, int, GroupTotals&) {
  TESSERA_CHECK(false, "row_group_steps_avx2: no AVX2 on this host");
}

#endif

}  // namespace tessera::numerics::detail
