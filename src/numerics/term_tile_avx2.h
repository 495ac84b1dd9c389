// The fast term-serial tile with AVX2: 8 PEs that share their serial operand, one PE per 32-bit
// vector lane (contract: numerics/term_pe.h; used by term_matmul_accumulate).
//
// PEs of a tile row share the inputs, PEs of a column the weights; a group is 8 PEs that share
// the serial (term-encoded) operand, so in step j lane i the serial value B (and its CSD terms) is
// one scalar for the whole group, while the parallel operand A differs per PE and is a vector.
// Per step: pe = code(A) + code(B) per lane (codes: the exponent if finite, kZeroCode if zero,
// kSpecialCode if Inf/NaN, so a product code below -2^19 is a zero product and one >= 2^19 has an
// Inf/NaN operand); E = max(vertical maximum over lanes, accumulator exponent); every processed
// term adds (ma << 18) >> (32 - W + E - pe - p) = trunc(ma * 2^(p + g)) (the shift is >= 0 since
// p + g <= W - 6 <= 18; it is in bounds iff < 26, and larger shifts give 0 by themselves); the
// accumulator (sig < 2^25) is aligned and added, and the sum normalised with round to nearest
// even, all in 32-bit vector lanes. Bound: L lanes below L * 2^(W + 3) plus the accumulator below
// 2^(W + 1) must stay below 2^31: W + 3 + ceil(log2(L + 1)) <= 31; and W <= 24 for the shifts.
// Steps with an Inf/NaN operand, and all steps of a group once an accumulator is Inf or NaN, run
// through the scalar fast_step (term_pe_fast.h) PE by PE.
// Exact-product steps: while neither operand of the group holds Inf/NaN and no accumulator is -0,
// a step visits only the lanes whose (scalar) B is finite and non-zero (SerialSteps), and a lane
// whose product lies in the window's top (g = W - 14 - (E - pe) >= 0 for every PE, so every
// term is in bounds and exact) adds its exact product (sa ma)(sb mb) << g (one 16-bit multiply)
// and its term count, without a term loop; only lanes with g < 0 in some PE take the term loop.
// At W = 23 the normalisation is the int-to-float conversion's round to nearest even (24 bits).
#pragma once

#include <cstdint>
#include <vector>

#include "numerics/term_pe.h"
#include "numerics/term_pe_fast.h"

namespace tessera::numerics::detail {

inline constexpr int kGroupPes = 8;
inline constexpr int32_t kZeroCode = -(1 << 20);
inline constexpr int32_t kSpecialCode = 1 << 24;

// True if the host, lane count and width allow the vector tile.
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
  // term_tile_decode.cpp).
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
    // For the lockstep steps (term_tile_avx2.cpp, row_lockstep_step): the exponent plus
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

// One group of PEs sharing a serial row, for row_steps_avx2: PEs x0 .. x0 + valid - 1, packed as
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
void row_steps_avx2(const PeConfig& cfg, const TileOperands& ops, const SerialSteps& row, int s,
                    int steps, const RowGroup* groups, int count, GroupTotals& totals);

}  // namespace tessera::numerics::detail
