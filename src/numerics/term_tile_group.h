// The lean lockstep runs of the vector tile (docs/term-serial.md, "Lean lockstep runs"), at two
// vector widths: 8 PEs per vector (AVX2; group_runs_avx2) and 16 (AVX-512 F and BW, two groups
// side by side; group_runs_avx512). One kernel, term_tile_group_kernel.h, written
// over term_tile_simd.h's operations, is compiled for each; group_runs takes the widest the host
// and configuration allow. Both give the same values, statistics and step maxima.
//
// A group of 8 PEs sharing a serial row (term_tile_avx2.h) runs all its steps with its
// accumulators in registers, reading the row's live lanes (SerialSteps) and the group's packed
// parallel operand. It covers the common case exactly and refuses the rest, leaving everything
// untouched, so that the caller runs the group through row_steps_avx2's step-by-step path:
// - W <= 23 (the accumulator fits an fp32 value; at W = 23 the normalisation is the int-to-float
//   conversion's round to nearest even, below it round_to_width; start values are rounded to
//   W + 1 bits as accumulator_from_f32 rounds them);
// - no Inf/NaN operand in the row or the parallel operand (the caller checks), and every start
//   accumulator +0 or an fp32 normal number not above acc_max_exponent;
// - no accumulator above acc_max_exponent after any step (an overflow, found at the end, refuses
//   the whole group) and every final accumulator +0 or in fp32's normal range.
// The step itself: term_tile_group_kernel.h.
#pragma once

#include <cstdint>

#include "numerics/term_tile_avx2.h"

namespace tessera::numerics::detail {

// True if group_runs_avx2 can take groups at this configuration (W <= 23 and the vector tile).
bool group_run_supported(const PeConfig& cfg);
// True if group_runs_avx512 can: the host has AVX-512 F and BW, and group_run_supported.
bool group_run_avx512_supported(const PeConfig& cfg);

// Runs the `steps` steps of every group of serial row `row` it covers (see above), step by step:
// PEs x0 .. x0 + valid - 1 of groups[i], packed as groups[i].group, accumulating into the fp32
// values out[v * stride]. For a group it takes, done[i] = 1: its values are written, its
// blocks' step maxima raised and its counters added to totals, the same as row_steps_avx2's
// step-by-step path gives. For the others done[i] = 0 and nothing of theirs is written.
void group_runs_avx2(const PeConfig& cfg, const TileOperands& ops, const SerialSteps& row,
                     int steps, const RowGroup* groups, int count, GroupTotals& totals,
                     uint8_t* done);
// The same, 16 PEs per vector (groups[i] and the next group it takes side by side); takes nothing
// (done all 0) unless group_run_avx512_supported(cfg).
void group_runs_avx512(const PeConfig& cfg, const TileOperands& ops, const SerialSteps& row,
                       int steps, const RowGroup* groups, int count, GroupTotals& totals,
                       uint8_t* done);
// group_runs_avx512 where supported, else group_runs_avx2.
void group_runs(const PeConfig& cfg, const TileOperands& ops, const SerialSteps& row, int steps,
                const RowGroup* groups, int count, GroupTotals& totals, uint8_t* done);

}  // namespace tessera::numerics::detail
