// The vector tile: groups of 8 PEs that share their serial operand, one PE per 32-bit vector lane
// (contract: numerics/term_pe/term_pe.h; files and call graph there; used by
// term_matmul_accumulate). This header holds the tile's operand layouts, its groups and counters,
// the tables its kernels read, and the dispatch between its two paths:
// - the lean lockstep runs (group_runs; docs/term-serial.md, "Lean lockstep runs"): a group's
//   steps with its accumulators in registers, for the common case only (below), at two vector
//   widths: 8 PEs per vector (AVX2; group_runs_avx2) and 16 (AVX-512 F and BW, two groups side by
//   side; group_runs_avx512), one kernel (group_runs_kernel.h) compiled for each;
// - the step-by-step path (group_steps_avx2, row_group_steps_avx2; AVX2), which takes any
//   operands, step by step, for the groups the lean runs refuse.
// row_steps runs a serial row's groups through the first and the rest through the second.
//
// The step-by-step path. PEs of a tile row share the inputs, PEs of a column the weights; a group
// is 8 PEs that share the serial (term-encoded) operand, so in step j lane i the serial value B
// (and its CSD terms) is one scalar for the whole group, while the parallel operand A differs per
// PE and is a vector. Per step: pe = code(A) + code(B) per lane (codes: the exponent if finite,
// kZeroCode if zero, kSpecialCode if Inf/NaN, so a product code below -2^19 is a zero product and
// one >= 2^19 has an Inf/NaN operand); E = max(vertical maximum over lanes, accumulator exponent);
// every processed term adds (ma << 18) >> (32 - W + E - pe - p) = trunc(ma * 2^(p + g)) (the
// shift is >= 0 since p + g <= W - 6 <= 18; it is in bounds iff < 26, and larger shifts give 0 by
// themselves); the accumulator (sig < 2^25) is aligned and added, and the sum normalised with
// round to nearest even, all in 32-bit vector lanes. Bound: L lanes below L * 2^(W + 3) plus the
// accumulator below 2^(W + 1) must stay below 2^31: W + 3 + ceil(log2(L + 1)) <= 31; and W <= 24
// for the shifts. Steps with an Inf/NaN operand, and all steps of a group once an accumulator is
// Inf or NaN, run through the scalar fast_step (scalar_step.h) PE by PE.
// Exact-product steps: while neither operand of the group holds Inf/NaN and no accumulator is -0,
// a step visits only the lanes whose (scalar) B is finite and non-zero (SerialSteps), and a lane
// whose product lies in the window's top (g = W - 14 - (E - pe) >= 0 for every PE, so every
// term is in bounds and exact) adds its exact product (sa ma)(sb mb) << g (one 16-bit multiply)
// and its term count, without a term loop; only lanes with g < 0 in some PE take the term loop.
// At W = 23 the normalisation is the int-to-float conversion's round to nearest even (24 bits).
//
// The lean lockstep runs. A group of 8 PEs sharing a serial row runs all its steps with its
// accumulators in registers, reading the row's live lanes (SerialSteps) and the group's packed
// parallel operand. It covers the common case exactly and refuses the rest, leaving everything
// untouched, so that the caller runs the group through the step-by-step path:
// - W <= 23 (the accumulator fits an fp32 value; at W = 23 the normalisation is the int-to-float
//   conversion's round to nearest even, below it round_to_width; start values are rounded to
//   W + 1 bits as accumulator_from_f32 rounds them);
// - no Inf/NaN operand in the row or the parallel operand (the caller checks), and every start
//   accumulator +0 or an fp32 normal number not above acc_max_exponent;
// - no accumulator above acc_max_exponent after any step (an overflow, found at the end, refuses
//   the whole group) and every final accumulator +0 or in fp32's normal range.
// Both widths give the same values, statistics and step maxima.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "numerics/term_pe/scalar_step.h"
#include "numerics/term_pe/term_pe.h"

namespace tessera::numerics::detail {

inline constexpr int kGroupPes = 8;
inline constexpr int32_t kZeroCode = -(1 << 20);
inline constexpr int32_t kSpecialCode = 1 << 24;

// True if the host, lane count and width allow the vector tile (AVX2 at least).
bool tile_avx2_supported(const PeConfig& cfg);

// Operands of one matmul in the layouts the vector tile reads. The serial operand is indexed
// [s][k] (s: the dimension its PEs share, k padded to kp with +0); the parallel operand [k][x]
// (x: the other dimension, padded with +0 to xp >= x_count + 7, a multiple of 8, so that the 8
// PEs from any x0 < x_count can be read as one vector).
struct TileOperands {
  int kp = 0, xp = 0;
  std::vector<TermOperand> s_ops;
  std::vector<int32_t> s_code;
  std::vector<TermOperand> p_ops;
  std::vector<int32_t> p_code, p_word;  // p_word: (ma << 18) | sign << 31
  std::vector<int32_t>
      p_signed;            // (-1)^sign * ma as a 16-bit integer in the low half (madd operand)
  int64_t p_specials = 0;  // parallel entries that are Inf or NaN
  // The exact-product steps' copy of the parallel operand, one kp x 8 block per group of PEs
  // x0s[g] .. x0s[g] + 7, k-major so that a group reads it sequentially: packed[(g * kp + k) * 8
  // + v] = exponent (kPackedZero for a zero) << 16 | ((-1)^sign * ma & 0xffff). Written by pack().
  std::vector<int32_t> packed;

  void resize(int serial_rows, int kp_, int x_count);
  void set_serial(int s, int k, TermOperand op);
  // set_serial(s, k, make_operand(bf16_from_f32(a[k]))) for k < K (vectorised;
  // tile_decode.cpp).
  void set_serial_row(int s, const float* a, int K);
  // set_parallel(k, x, make_operand(bf16_from_f32(a[x]))) for x < count (vectorised).
  void set_parallel_row(int k, const float* a, int count);
  void set_parallel(int k, int x, TermOperand op);
  void pack(const std::vector<int>& x0s);  // after the parallel operand is set
};

inline constexpr int32_t kPackedZero = -(1 << 14);
// Added to product exponents in the lockstep steps: every product of non-zero finite bf16 values
// (pe >= -266) and every accumulator exponent the steps meet is then positive, while a zero
// parallel operand (kPackedZero) stays negative, i.e. above every live product as unsigned.
inline constexpr int32_t kExponentBias = 1024;

// One serial row prepared once for every group that shares it: per step, the lanes whose B is
// finite and non-zero (the only ones with terms), and whether the row holds an Inf or NaN.
struct SerialSteps {
  struct LiveB {
    int32_t exponent = 0;
    int32_t signed_significand = 0;  // (-1)^sign * mb & 0xffff (madd operand)
    uint8_t lane = 0, count = 0, significand = 0, negative = 0;
    // For the lockstep steps (group_steps_avx2.cpp, row_lockstep_step): the exponent plus
    // kExponentBias, and that plus the lowest term power.
    int32_t biased_exponent = 0, oob_exponent = 0;
    int32_t packed_offset =
        0;  // (step * lanes + lane) * kGroupPes: the lane's k in a group's packed block
  };
  int lanes = 0;
  bool special = false;
  std::vector<uint8_t> live_count;  // [j]
  std::vector<LiveB> live;          // [j * lanes + t]: the t-th live B of step j
  std::vector<uint8_t> max_count;   // [j]: the most terms of a live B (0 without live lanes)
  std::vector<int32_t> count_sum;   // [j]: the terms of all live Bs
  std::vector<uint8_t>
      min_low;  // [j]: the lowest term power over the live Bs (8 without live lanes)

  void build(const TileOperands& ops, int s, int steps, int L);
};

// Counters of term_matmul's statistics that the group adds to.
struct GroupTotals {
  int64_t processed = 0, skipped_zero = 0, skipped_oob = 0, lane_idle = 0;
  int64_t pe_cycles = 0;  // the valid PEs' step cycles, summed over steps and PEs

  // Adds a finished group of `valid` PEs with `lanes` lanes run for `steps` steps, from its sums
  // over PEs and steps: step cycles, terms processed, and terms of live lanes (processed + out of
  // bounds); every other term slot was skipped as zero.
  void add_group(int64_t cycle_sum, int64_t processed, int64_t nonzero, int steps, int valid,
                 int lanes) {
    this->processed += processed;
    skipped_oob += nonzero - processed;
    skipped_zero += int64_t{steps} * valid * lanes * kTermSlots - nonzero;
    lane_idle += int64_t{lanes} * cycle_sum - processed;
    pe_cycles += cycle_sum;
  }
};

// Runs `steps` steps of the PEs x0 .. x0 + valid - 1 (valid <= 8) sharing serial row s (`row`:
// its SerialSteps), with accumulators acc[0..valid). `group` indexes ops.packed for this x0 (-1:
// not packed; every step takes the general path). Writes cycles[j * 8 + v] for PE v and step j
// (0 for v >= valid) if `cycles` is non-null, and raises step_max[j] to the slowest valid PE's
// cycles of step j if `step_max` is non-null; totals.pe_cycles gains the valid PEs' cycles.
void group_steps_avx2(const PeConfig& cfg, const TileOperands& ops, const SerialSteps& row, int s,
                      int x0, int group, int valid, int steps, PeAccumulator* acc, int* cycles,
                      GroupTotals& totals, int* step_max = nullptr);

// One group of PEs sharing a serial row, for row_steps: PEs x0 .. x0 + valid - 1, packed as
// `group`, PE v accumulating into the fp32 value out[v * stride] (loaded with accumulator_from_f32,
// stored with accumulator_to_f32), and the step maxima of its tile block (raised in place).
struct RowGroup {
  int x0 = 0, group = -1, valid = 0;
  float* out = nullptr;
  int stride = 1;
  int* step_max = nullptr;
};

// group_steps_avx2 for every group of serial row s, step by step: step j of every group, then
// step j + 1 (the groups of a row meet the same serial values, so their branches repeat). The
// same values, statistics and step maxima as group_steps_avx2 group by group.
void row_group_steps_avx2(const PeConfig& cfg, const TileOperands& ops, const SerialSteps& row,
                          int s, int steps, const RowGroup* groups, int count, GroupTotals& totals);

// True if group_runs_avx2 can take groups at this configuration (W <= 23 and the vector tile).
bool group_run_supported(const PeConfig& cfg);
// True if group_runs_avx512 can: the host has AVX-512 F and BW, and group_run_supported.
bool group_run_avx512_supported(const PeConfig& cfg);

// The lean lockstep runs (see above) of the groups of serial row `row` they cover, step by step:
// PEs x0 .. x0 + valid - 1 of groups[i], packed as groups[i].group, accumulating into the fp32
// values out[v * stride]. For a group they take, done[i] = 1: its values are written, its blocks'
// step maxima raised and its counters added to totals, the same as row_group_steps_avx2 gives. For
// the others done[i] = 0 and nothing of theirs is written.
// At 8 PEs per vector (group_runs_avx2.cpp); takes nothing unless group_run_supported(cfg).
void group_runs_avx2(const PeConfig& cfg, const TileOperands& ops, const SerialSteps& row,
                     int steps, const RowGroup* groups, int count, GroupTotals& totals,
                     uint8_t* done);
// At 16 PEs per vector, groups[i] and the next group it takes side by side
// (group_runs_avx512.cpp); takes nothing unless group_run_avx512_supported(cfg).
void group_runs_avx512(const PeConfig& cfg, const TileOperands& ops, const SerialSteps& row,
                       int steps, const RowGroup* groups, int count, GroupTotals& totals,
                       uint8_t* done);
// group_runs_avx512 where supported, else group_runs_avx2.
void group_runs(const PeConfig& cfg, const TileOperands& ops, const SerialSteps& row, int steps,
                const RowGroup* groups, int count, GroupTotals& totals, uint8_t* done);

// Every group of serial row s (`row`: its SerialSteps; s: its index in ops): the lean lockstep
// runs take the groups they cover (group_runs), row_group_steps_avx2 the rest. The same values,
// statistics and step maxima as group_steps_avx2 group by group.
void row_steps(const PeConfig& cfg, const TileOperands& ops, const SerialSteps& row, int s,
               int steps, const RowGroup* groups, int count, GroupTotals& totals);

// Tables the kernels read, built once (tile.cpp).
// The accumulator width whose normalisation is fp32's int-to-float conversion (the default, fast
// case of the lean runs).
inline constexpr int kFullAccumulatorWidth = 23;
// terms_from()[m][c]: the number of CSD terms of significand m with power >= c (c = 0..15; 0 for
// c > 8), as a byte-shuffle table.
const std::array<std::array<uint8_t, 16>, 256>& terms_from();
// Per B, indexed by signed_significand & 0x1ff (mb for a positive B, 512 - mb for a negative
// one): the multipliers of the lean kernel's truncated_terms. Dword i holds 2^(7 + p) of the i-th
// term that adds (its CSD sign times B's sign positive) in its high half and of the i-th term that
// subtracts in its low half; 0 pads.
inline constexpr int kPairSlots = 4;  // at most 4 CSD terms of one sign in an 8-bit significand
struct PairTerms {
  uint32_t mult[kPairSlots];
};
const std::array<PairTerms, 512>& pair_terms();

}  // namespace tessera::numerics::detail
