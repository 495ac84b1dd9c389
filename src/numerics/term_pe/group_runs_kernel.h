// The lean lockstep kernel (tile.h, "The lean lockstep runs"; docs/term-serial.md), written once
// over the vector operations of simd_ops.h and compiled once per width: group_runs_avx2.cpp
// (Avx2Ops, 8 PEs per vector) and group_runs_avx512.cpp (Avx512Ops, 16 PEs per vector: two
// RowGroups side by side).
//
// A per-target header (numerics/term_pe/term_pe.h, "Per-target instantiation"): include it only
// from those files, after defining TESSERA_SIMD_TARGET as the attribute of their target.
// Everything here has internal linkage, so each file gets its own copy, compiled for its own
// target.
//
// Per vector of PEs ("run"): E from the live lanes' product exponents and the accumulator's;
// every live lane adds its exact product << g (g = pe - (E - (W - 14)), 0 for g < 0); one signed
// minimum over the lanes' product exponents tells whether any valid PE has a truncated lane or a
// zero A in a live lane. If none, the step's timing is the serial row's (SerialSteps::max_count,
// count_sum); otherwise the truncated lanes add their terms' truncations (truncated_terms) and
// the timing is the row's unless a zero A or an out-of-bounds term is possible, where it is
// counted per PE and lane.
#pragma once

#ifndef TESSERA_SIMD_TARGET
#error "group_runs_kernel.h is a per-target header: define TESSERA_SIMD_TARGET first (term_pe.h)"
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <vector>

#include "common/error.h"
#include "numerics/term_pe/simd_lane_ops.h"
#include "numerics/term_pe/simd_ops.h"
#include "numerics/term_pe/tile.h"

namespace tessera::numerics::detail {

namespace {

constexpr int kFullWidth = kFullAccumulatorWidth;
// The window exponent's floor outside fixed-exponent mode: a step with neither a live product nor
// an accumulator then aligns a zero accumulator (a_eb = 0) by E - 0 >= 32, i.e. to 0, so the
// alignment needs no mask. Every live product and accumulator exponent is above it (biased).
constexpr int32_t kWindowFloor = 32;
static_assert(kExponentBias - 300 > kWindowFloor,
              "biased exponents must stay above the window floor");

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
template <class S>
TESSERA_SIMD_TARGET __attribute__((always_inline)) inline typename S::V truncated_terms(
    const typename S::V* mult, typename S::V word, typename S::V shift) {
  using V = typename S::V;
  const V high = S::slli(word, 16);  // signed ma in the high half
  const V z = S::srlv(S::srli(S::abs16(high), 8), shift);
  const V both = S::low_half_to_both(z);
  V sum = S::mulhi_unsigned16(both, mult[0]);
  for (int i = 1; i < kPairSlots; ++i) sum = S::add16(sum, S::mulhi_unsigned16(both, mult[i]));
  // A's sign applied to the high half, sign-extended.
  return S::high_half_signed_by(S::sub16(sum, S::slli(sum, 16)), high);
}

// One vector of PEs between steps. Accumulator of PE v: zero if a_eb = 0, else sign of a_sgn,
// significand a_mag (2^W <= a_mag < 2^(W+1)) and exponent a_eb - kExponentBias.
template <class S>
struct Run {
  using V = typename S::V;
  const PeConfig* cfg;
  const std::array<std::array<uint8_t, 16>, 256>* terms_from;
  const int32_t* packed[S::kHalves];  // each half's packed block (a missing half repeats the first)
  int* slowest;                       // [j * kHalves + h]: half h's slowest valid PE in step j
  typename S::M valid;
  V a_eb, a_mag, a_sgn;
  V exponent_max;  // over all steps: an overflow check at the end
  V processed_acc, nonzero_acc, cycle_acc;
  int64_t uniform_processed, uniform_cycles;  // per PE, over the steps timed by the serial row
};

// What every run meets in step j, prepared once for all of them: the live serial lanes, their
// exponents and signed significands broadcast, and the row's per-step figures.
template <class S>
struct StepLanes {
  using V = typename S::V;
  const SerialSteps::LiveB* b;
  V biased_exponent[kGroupPes], signed_significand[kGroupPes];
  V mult[kGroupPes][kPairSlots];  // the lanes' PairTerms multipliers (truncated_terms)
  V min_low;                      // the lowest term power over the live Bs
  V e_floor;  // the window exponent's floor: the fixed exponent (biased) in fixed-exponent mode,
              // else kWindowFloor
  int row_cycles;     // max(most terms of a live B, min_step_cycles)
  int row_processed;  // the terms of all live Bs
};

template <class S, int N>
TESSERA_SIMD_TARGET __attribute__((always_inline)) inline void prepare(
    StepLanes<S>& s, const SerialSteps& row, const PeConfig& cfg, const PairTerms* pairs, int j) {
  s.b = &row.live[static_cast<size_t>(j) * row.lanes];
  for (int t = 0; t < N; ++t) {
    s.biased_exponent[t] = S::set1(s.b[t].biased_exponent);
    s.signed_significand[t] = S::set1(s.b[t].signed_significand);
    const PairTerms& pt = pairs[s.b[t].signed_significand & 0x1ff];
    for (int i = 0; i < kPairSlots; ++i) s.mult[t][i] = S::set1(static_cast<int32_t>(pt.mult[i]));
  }
  s.min_low = S::set1(row.min_low[static_cast<size_t>(j)]);
  s.row_cycles = std::max<int>(row.max_count[static_cast<size_t>(j)], cfg.min_step_cycles);
  s.row_processed = row.count_sum[static_cast<size_t>(j)];
  s.e_floor = S::set1(cfg.fixed_exponent_mode ? cfg.fixed_exponent + kExponentBias : kWindowFloor);
}

// A step timed by the serial row: every live lane processes all its terms in every valid PE.
template <class S>
inline void row_timed(Run<S>& r, const StepLanes<S>& s, int* slowest) {
  r.uniform_cycles += s.row_cycles;
  r.uniform_processed += s.row_processed;
  for (int h = 0; h < S::kHalves; ++h) slowest[h] = s.row_cycles;
}

// A step timed per PE and lane: the terms not out of bounds of lanes with a non-zero A. If no
// lane with a non-zero A can have an out-of-bounds term (the smallest such product exponent plus
// the row's lowest power clears limit = E - (W - 7)), a lane's terms are its B's count.
template <class S, int N, bool kMaybeOob>
TESSERA_SIMD_TARGET __attribute__((always_inline)) inline void lane_counts(
    Run<S>& r, const SerialSteps::LiveB* b, const typename S::V* pe, typename S::V gbase,
    int* slowest) {
  using V = typename S::V;
  V proc_max = S::zero(), processed = S::zero(), nonzero = S::zero();
  for (int t = 0; t < N; ++t) {
    const V count = S::keep(S::gt(pe[t], S::zero()), S::set1(b[t].count));
    const V lane = kMaybeOob ? processed_terms<S>(*r.terms_from, b[t], pe[t], gbase) : count;
    proc_max = S::max(proc_max, lane);
    processed = S::add(processed, lane);
    nonzero = S::add(nonzero, count);
  }
  r.processed_acc = S::add(r.processed_acc, S::keep(r.valid, processed));
  r.nonzero_acc = S::add(r.nonzero_acc, S::keep(r.valid, nonzero));
  const V c = S::keep(r.valid, S::max(proc_max, S::set1(r.cfg->min_step_cycles)));
  r.cycle_acc = S::add(r.cycle_acc, c);
  S::half_maxima(c, slowest);
}

template <class S, int N>
TESSERA_SIMD_TARGET __attribute__((always_inline)) inline void lane_timed(
    Run<S>& r, const StepLanes<S>& s, const typename S::V* pe, typename S::V gbase,
    typename S::V limit, int* slowest) {
  using V = typename S::V;
  V umin = S::set1(-1);  // unsigned: a zero A (negative) drops out
  for (int t = 0; t < N; ++t) umin = S::min_unsigned(umin, pe[t]);
  const V low = S::add(umin, s.min_low);
  if (S::any(S::gt(limit, low), r.valid))
    lane_counts<S, N, true>(r, s.b, pe, gbase, slowest);
  else
    lane_counts<S, N, false>(r, s.b, pe, gbase, slowest);
}

// Step j with N live lanes (exponents biased by kExponentBias; a zero A is coded kPackedZero, so
// its product exponent is negative).
template <class S, int N, bool kFull>
TESSERA_SIMD_TARGET __attribute__((always_inline)) inline void step(Run<S>& r, int j,
                                                                    const StepLanes<S>& s) {
  using V = typename S::V;
  const int W = kFull ? kFullWidth : r.cfg->acc_fraction_bits;
  const SerialSteps::LiveB* b = s.b;
  constexpr int kSlots = N > 0 ? N : 1;
  V w[kSlots], pe[kSlots];
  // Maximum and minimum product exponents (every A zero: negative; E is then the accumulator's or
  // the floor), and the exact products shifted into the window (0 where the shift is negative,
  // i.e. g < 0). Without live lanes: nothing but the accumulator.
  V pe_max = S::zero(), smin = S::set1(INT32_MAX);
  for (int t = 0; t < N; ++t) {
    w[t] = S::load_packed(r.packed, b[t].packed_offset);
    pe[t] = S::add(S::srai(w[t], 16), s.biased_exponent[t]);
    pe_max = t == 0 ? pe[t] : S::max(pe_max, pe[t]);
    smin = t == 0 ? pe[t] : S::min(smin, pe[t]);
  }
  const V E = S::max(S::max(pe_max, r.a_eb), s.e_floor);
  const V gbase = S::sub(E, S::set1(W - 14));
  V value = S::zero(), g[kSlots];  // g = pe - gbase (contract: W - 14 - (E - pe))
  for (int t = 0; t < N; ++t) {
    g[t] = S::sub(pe[t], gbase);
    const V exact = S::sllv(S::madd16(w[t], s.signed_significand[t]), g[t]);
    value = t == 0 ? exact : S::add(value, exact);
  }
  int* slowest = r.slowest + static_cast<ptrdiff_t>(j) * S::kHalves;
  if (!S::any(S::gt(gbase, smin), r.valid)) {
    // Every product of every valid PE in the window's top (exact) and every A of a live lane
    // non-zero.
    row_timed(r, s, slowest);
  } else {
    // Lanes with g < 0 in some PE add their truncated terms (0 in the other PEs, in PEs beyond
    // the valid ones, which hold +0 or another block's operands never stored, and for a zero A).
    // truncated_terms' shift h - 1 = -g - 1 = ~g.
    for (uint32_t lanes = S::template negative_lanes<N>(g); lanes != 0;) {
      const int t = std::countr_zero(lanes) / 4;
      lanes &= ~(uint32_t{0xf} << (4 * t));
      value = S::add(value, truncated_terms<S>(s.mult[t], w[t], S::bit_xor(g[t], S::set1(-1))));
    }
    // No zero A and no out-of-bounds term (pe + lowest power >= E - (W - 7) for every live lane)
    // if the minimum product exponent plus the row's lowest power clears it.
    const V limit = S::sub(E, S::set1(W - 7));
    const V low = S::add(smin, s.min_low);
    if (!S::any(S::gt(limit, low), r.valid))
      row_timed(r, s, slowest);
    else
      lane_timed<S, N>(r, s, pe, gbase, limit, slowest);
  }
  // Contract step 5: the accumulator truncated to the window, added, rounded to W + 1 bits (at
  // W = 23 the conversion's round to nearest even, else round_to_width); a zero sum is +0. A zero
  // accumulator (a_eb = 0) aligns to 0: E >= kWindowFloor.
  const V aligned = S::with_sign_of(S::srlv(r.a_mag, S::sub(E, r.a_eb)), r.a_sgn);
  const V sum = S::add(value, aligned);
  const typename S::M nonzero = S::mask_not(S::eq(sum, S::zero()));
  if constexpr (kFull) {
    const V bits = S::f32_bits(S::abs(sum));
    r.a_mag = S::bit_or(S::bit_and(bits, S::set1(0x7fffff)), S::set1(0x800000));
    r.a_eb = S::keep(nonzero, S::add(E, S::sub(S::srli(bits, 23), S::set1(127 + W))));
  } else {
    V shift;
    round_to_width<S>(S::abs(sum), W, r.a_mag,
                      shift);  // a_mag is garbage for a zero sum, a_eb = 0 drops it
    r.a_eb = S::keep(nonzero, S::add(E, shift));
  }
  r.a_sgn = sum;
  r.exponent_max = S::max(r.exponent_max, r.a_eb);
}

// Step j of runs[0..n) (n >= 1), with N live serial lanes prepared once for all of them.
template <class S, int N, bool kFull>
TESSERA_SIMD_TARGET __attribute__((always_inline)) inline void step_of_runs(
    Run<S>* runs, int n, int j, const SerialSteps& row, const PairTerms* pairs) {
  StepLanes<S> s;
  prepare<S, N>(s, row, *runs[0].cfg, pairs, j);
  for (int i = 0; i < n; ++i) step<S, N, kFull>(runs[i], j, s);
}

// All steps of runs[0..n), step by step: step j of every run, then step j + 1 (the runs meet the
// same serial lanes, so the dispatch on the live lane count and the lanes' broadcasts are done
// once per step).
template <class S, bool kFull>
TESSERA_SIMD_TARGET void run_steps(Run<S>* runs, int n, int steps, const SerialSteps& row) {
  if (n == 0) return;
  const PairTerms* pairs = pair_terms().data();
  for (int j = 0; j < steps; ++j) {
#define TESSERA_STEPS(N)                               \
  case N:                                              \
    step_of_runs<S, N, kFull>(runs, n, j, row, pairs); \
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
        step_of_runs<S, 8, kFull>(runs, n, j, row, pairs);
    }
#undef TESSERA_STEPS
  }
}

// Loads the start accumulators of the run's groups (half h: groups[h], or none), rounded to W + 1
// bits as accumulator_from_f32 does (nearest even; exact for values a W-bit accumulator wrote).
// Returns the halves refused: those with a start value that is not +0 or an fp32 normal number
// whose rounded exponent is <= acc_max_exponent.
template <class S>
TESSERA_SIMD_TARGET uint32_t load(Run<S>& r, const RowGroup* const* groups) {
  using V = typename S::V;
  alignas(64) int32_t b[S::kPes] = {};
  for (int h = 0; h < S::kHalves; ++h)
    if (groups[h] != nullptr)
      for (int v = 0; v < groups[h]->valid; ++v)
        std::memcpy(&b[h * kGroupPes + v],
                    &groups[h]->out[static_cast<ptrdiff_t>(v) * groups[h]->stride], sizeof(float));
  const V bits = S::load(b);
  const int cut = kFullWidth - r.cfg->acc_fraction_bits;  // fraction bits the accumulator lacks
  V magnitude = S::bit_and(bits, S::set1(INT32_MAX));
  // Normal before rounding: a subnormal whose rounding at bit `cut` carries into the normal range
  // is refused (accumulator_from_f32 rounds it at its own leading bit).
  const V raw_biased = S::srli(magnitude, 23);
  if (cut >
      0) {  // round to nearest even at bit `cut` of the fp32 pattern: a carry raises the exponent
    const V odd = S::bit_and(S::srli(magnitude, cut), S::set1(1));
    magnitude = S::add(magnitude, S::add(S::set1((1 << (cut - 1)) - 1), odd));
    magnitude = S::bit_and(magnitude, S::set1(-(1 << cut)));
  }
  const V biased = S::srli(magnitude, 23);
  const typename S::M zero = S::eq(bits, S::zero());
  // Normal before rounding and not above the maximum after.
  const typename S::M normal =
      S::mask_and(S::gt(raw_biased, S::zero()),
                  S::gt(S::set1(std::min(r.cfg->acc_max_exponent, 127) + 128), biased));
  const uint32_t refused = S::halves_with(S::mask_not(S::mask_or(zero, normal)));
  r.a_eb = S::keep(S::mask_not(zero), S::add(biased, S::set1(kExponentBias - 127)));
  r.a_mag = S::srli(S::bit_or(S::bit_and(magnitude, S::set1(0x7fffff)), S::set1(0x800000)), cut);
  r.a_sgn = bits;
  return refused;
}

// Writes the accumulators of the run's groups as fp32, except for the halves returned: those
// with an accumulator that overflowed in some step or ends outside fp32's normal range (nothing
// of theirs is written).
template <class S>
TESSERA_SIMD_TARGET uint32_t store(const Run<S>& r, const RowGroup* const* groups) {
  using V = typename S::V;
  using M = typename S::M;
  const M overflow = S::gt(r.exponent_max, S::set1(r.cfg->acc_max_exponent + kExponentBias));
  const M nonzero = S::mask_not(S::eq(r.a_eb, S::zero()));
  const V biased = S::sub(r.a_eb, S::set1(kExponentBias - 127));
  const M in_range = S::mask_and(S::gt(biased, S::zero()), S::gt(S::set1(255), biased));
  const uint32_t refused = S::halves_with(
      S::mask_and(S::mask_or(overflow, S::mask_and(nonzero, S::mask_not(in_range))), r.valid));
  const int cut = kFullWidth - r.cfg->acc_fraction_bits;
  const V magnitude =
      S::bit_or(S::slli(biased, 23), S::bit_and(S::slli(r.a_mag, cut), S::set1(0x7fffff)));
  const V bits = S::keep(nonzero, S::bit_or(magnitude, S::bit_and(r.a_sgn, S::set1(INT32_MIN))));
  alignas(64) int32_t out[S::kPes];
  S::store(out, bits);
  for (int h = 0; h < S::kHalves; ++h)
    if (groups[h] != nullptr && (refused >> h & 1) == 0)
      for (int v = 0; v < groups[h]->valid; ++v)
        std::memcpy(&groups[h]->out[static_cast<ptrdiff_t>(v) * groups[h]->stride],
                    &out[h * kGroupPes + v], sizeof(float));
  return refused;
}

// Adds a finished half's counters to totals and raises its block's step maxima.
template <class S>
TESSERA_SIMD_TARGET void finish(const Run<S>& r, int h, const RowGroup& rg, int steps,
                                GroupTotals& totals) {
  for (int j = 0; j < steps; ++j)
    rg.step_max[j] =
        std::max(rg.step_max[j], r.slowest[static_cast<ptrdiff_t>(j) * S::kHalves + h]);
  int64_t cycles[S::kHalves], processed[S::kHalves], nonzero[S::kHalves];
  S::half_sums(r.cycle_acc, cycles);
  S::half_sums(r.processed_acc, processed);
  S::half_sums(r.nonzero_acc, nonzero);
  totals.add_group(cycles[h] + r.uniform_cycles * rg.valid,
                   processed[h] + r.uniform_processed * rg.valid,
                   nonzero[h] + r.uniform_processed * rg.valid, steps, rg.valid, r.cfg->lanes);
}

// group_runs_avx2's contract (tile.h), S::kHalves groups per vector; takes nothing
// unless `width_supported` (the width's group_run_*_supported for cfg).
template <class S>
TESSERA_SIMD_TARGET void group_runs_simd(bool width_supported, const PeConfig& cfg,
                                         const TileOperands& ops, const SerialSteps& row, int steps,
                                         const RowGroup* groups, int count, GroupTotals& totals,
                                         uint8_t* done) {
  std::fill(done, done + count, uint8_t{0});
  if (!width_supported || row.special || ops.p_specials != 0) return;
  TESSERA_CHECK(row.lanes == cfg.lanes && row.live_count.size() >= static_cast<size_t>(steps),
                "group_runs: serial row prepared for another shape");
  constexpr int kChunk = 16;  // runs stepped together
  constexpr int H = S::kHalves;
  thread_local std::vector<int> slowest;
  slowest.resize(static_cast<size_t>(kChunk) * steps * H);
  std::array<Run<S>, kChunk> runs;  // every field is set before use (no zeroing per row)
  std::array<std::array<int, H>, kChunk> index;  // the group of each half, -1 for none
  const auto& from = terms_from();
  const auto group_of = [&](int i, int h) {
    return index[static_cast<size_t>(i)][static_cast<size_t>(h)];
  };
  for (int first = 0; first < count;) {
    int n = 0;
    while (first < count && n < kChunk) {
      Run<S>& r = runs[static_cast<size_t>(n)];
      std::array<int, H>& halves = index[static_cast<size_t>(n)];
      const RowGroup* half_groups[H] = {};
      int valid[H] = {};
      int taken = 0;
      for (; first < count && taken < H; ++first) {
        const RowGroup& rg = groups[first];
        TESSERA_CHECK(rg.valid >= 1 && rg.valid <= kGroupPes, "group_runs: bad group");
        if (rg.group < 0 ||
            ops.packed.size() < static_cast<size_t>(rg.group + 1) * ops.kp * kGroupPes)
          continue;
        halves[static_cast<size_t>(taken)] = first;
        half_groups[taken] = &rg;
        valid[taken] = rg.valid;
        r.packed[taken] = ops.packed.data() + static_cast<size_t>(rg.group) * ops.kp * kGroupPes;
        ++taken;
      }
      if (taken == 0) break;
      for (int h = taken; h < H; ++h) {
        halves[static_cast<size_t>(h)] = -1;
        r.packed[h] = r.packed[0];
      }
      r.cfg = &cfg;
      r.terms_from = &from;
      r.slowest = slowest.data() + static_cast<size_t>(n) * steps * H;
      r.exponent_max = r.processed_acc = r.nonzero_acc = r.cycle_acc = S::zero();
      r.uniform_processed = r.uniform_cycles = 0;
      const uint32_t refused = load(r, half_groups);
      for (int h = 0; h < H; ++h)
        if (refused >> h & 1) {
          halves[static_cast<size_t>(h)] = -1;
          valid[h] = 0;
        }
      r.valid = S::first_pes(valid);
      if (refused != (1u << taken) - 1) ++n;
    }
    if (cfg.acc_fraction_bits == kFullWidth)
      run_steps<S, true>(runs.data(), n, steps, row);
    else
      run_steps<S, false>(runs.data(), n, steps, row);
    for (int i = 0; i < n; ++i) {
      const Run<S>& r = runs[static_cast<size_t>(i)];
      const RowGroup* half_groups[H];
      for (int h = 0; h < H; ++h)
        half_groups[h] = group_of(i, h) >= 0 ? &groups[group_of(i, h)] : nullptr;
      const uint32_t refused = store(r, half_groups);
      for (int h = 0; h < H; ++h) {
        if (half_groups[h] == nullptr || (refused >> h & 1) != 0) continue;
        finish(r, h, *half_groups[h], steps, totals);
        done[group_of(i, h)] = 1;
      }
    }
  }
}

}  // namespace
}  // namespace tessera::numerics::detail
