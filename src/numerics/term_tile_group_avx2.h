// The group-major lockstep kernel of the vector tile (docs/term-serial.md, "Group-major runs").
//
// One group of 8 PEs sharing a serial row (term_tile_avx2.h) runs all its steps with its
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
// Per step: E from the live lanes' product exponents and the accumulator's; every live lane adds
// its exact product << g (g = pe - (E - (W - 14)), 0 for g < 0); one signed minimum over the
// lanes' product exponents tells whether any valid PE has a truncated lane or a zero A in a live
// lane. If none, the step's timing is the serial row's (SerialSteps::max_count, count_sum);
// otherwise the truncated lanes add their terms' truncations (nested-floor form below) and the
// timing is the row's unless a zero A or an out-of-bounds term is possible, where it is counted
// per PE and lane.
// Truncated lane (h = -g > 0): with Y = floor(ma * 2^(8 - h)) (one variable shift), the term of
// power p contributes floor(ma * 2^(p - h)) = floor(Y / 2^(8 - p)) (floor(floor(x / a) / b) =
// floor(x / (a b)) for positive integers a, b), a shift by a per-term constant; terms with p < h
// - 7 give 0 by themselves, as the contract's out-of-bounds terms do.
#pragma once

#include <cstdint>

#include "numerics/term_tile_avx2.h"

namespace tessera::numerics::detail {

// True if group_run_avx2 can take groups at this configuration (W <= 23 and the vector tile).
bool group_run_supported(const PeConfig& cfg);

// Runs the `steps` steps of every group of serial row `row` it covers (see above), step by step:
// PEs x0 .. x0 + valid - 1 of groups[i], packed as groups[i].group, accumulating into the fp32
// values out[v * stride]. For a group it takes, done[i] = 1: its values are written, its
// blocks' step maxima raised and its counters added to totals, the same as row_steps_avx2's
// step-by-step path gives. For the others done[i] = 0 and nothing of theirs is written.
void group_runs_avx2(const PeConfig& cfg, const TileOperands& ops, const SerialSteps& row, int steps,
                     const RowGroup* groups, int count, GroupTotals& totals, uint8_t* done);

}  // namespace tessera::numerics::detail
