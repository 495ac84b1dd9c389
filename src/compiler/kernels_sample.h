// Choosing the next token on the chip: the sampling of numerics/sampling.h over a row of logits in
// HBM, bit for bit, with the draws from the RNG unit (the `rng` instruction: one draw of
// sublanes x lanes words per sampled token, none when greedy).
//
// Vector memory: each block j of L logits in sublane 0 of its own slot of S rows (rows past the
// row's end -Inf); per block the logits still unpicked and the candidate flags (top-k), the
// scores, one draw. Maxima over the logits: lane-wise VMAXF over the blocks, then the reduce
// unit's RMAX over the lanes; the lowest index of a maximum: the maximum of -index over the lanes
// that equal it (indices are exact in fp32). top-k (0 < K < n, temperature > 0): K rounds, each
// picking the lowest index of the largest unpicked logit.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/codegen.h"
#include "numerics/sampling.h"

namespace tessera::compiler {

// The token (int32, one word at `out`) chosen from the n logits at `logits`. Error when n
// exceeds the words of one draw or the kernel's rows do not fit vector memory.
void emit_sample(Codegen& cg, const std::string& name, int64_t logits, int64_t out, int64_t n,
                 const numerics::Sampling& s);

// A program that seeds the RNG unit with `seed` (run once before the first sampling kernel).
isa::Program rng_seed_program(uint32_t seed, const core::CoreSpec& spec);

}  // namespace tessera::compiler
