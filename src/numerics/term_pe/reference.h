// The bit-level reference of the term-serial PE step (contract: term_pe.h).
//
// Follows the hardware step by step, in the plainest code: decode every lane, add exponents, find
// the maximum and compare it with the accumulator's exponent, encode B's significand with the
// digit-by-digit CSD algorithm (csd_encode, not the table), compute every term's shift amount,
// skip out-of-bounds terms, shift A's significand by each processed term into an arbitrary-
// precision signed integer (the adder tree), align the accumulator, add, normalise with explicit
// round-to-nearest-even on the dropped bits. No 64/128-bit shortcuts, so it is the oracle the fast
// model (TermPe) is tested against: same value bits, same per-lane term counts.
#pragma once

#include <span>

#include "numerics/term_pe/term_pe.h"

namespace tessera::numerics {

// One step, as TermPe::step (validates cfg).
StepStats reference_step(const PeConfig& cfg, std::span<const Bf16> a, std::span<const Bf16> b,
                         PeAccumulator& acc);

}  // namespace tessera::numerics
