// What the lean lockstep runs' dispatch (term_tile_group.cpp) and their kernel
// (term_tile_group_kernel.h) share: the accumulator width the kernel normalises by conversion, and
// the truncated-lane multiplier table.
#pragma once

#include <array>
#include <cstdint>

namespace tessera::numerics::detail {

// The accumulator width whose normalisation is fp32's int-to-float conversion (the default, fast
// case).
inline constexpr int kFullAccumulatorWidth = 23;

// Per B, indexed by signed_significand & 0x1ff (mb for a positive B, 512 - mb for a negative
// one): the multipliers of the kernel's truncated_terms. Dword i holds 2^(7 + p) of the i-th term
// that adds (its CSD sign times B's sign positive) in its high half and of the i-th term that
// subtracts in its low half; 0 pads.
inline constexpr int kPairSlots = 4;  // at most 4 CSD terms of one sign in an 8-bit significand
struct PairTerms {
  uint32_t mult[kPairSlots];
};
const std::array<PairTerms, 512>& pair_terms();

}  // namespace tessera::numerics::detail
