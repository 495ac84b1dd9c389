// The torus (torus-dimension, hierarchical) all-reduce of the collective library: algorithm,
// layout and reduction order in collectives.h (CollectiveAlgorithm::kTorus). Internal to the
// library: collectives.cpp dispatches to these after validate().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/collectives.h"

namespace tessera::compiler {

// The grid's dimensions (spec.grid, or {processors} when it is empty).
std::vector<int> torus_dims(const CollectiveSpec& spec);

// The torus part of validate(): Error naming the field.
void validate_torus(const CollectiveSpec& spec);

// Assembly text; `pid_line` puts the processor index into s1 (smfsr for the one image, sli for
// a specialised program). Registers s1..s23, as the ring (which uses s1..s22).
std::string torus_allreduce_asm(const CollectiveSpec& spec, const std::string& pid_line);

// Superstep `step` (0 <= step < collective_supersteps(spec)) alone: collective_step_asm's contract.
// Registers s1..s23.
std::string torus_allreduce_step_asm(const CollectiveSpec& spec, const std::string& pid_line,
                                     int step);

// Host reference in the defined order (collectives.h).
std::vector<uint32_t> torus_allreduce_reference(const CollectiveSpec& spec,
                                                const std::vector<std::vector<uint32_t>>& inputs);

}  // namespace tessera::compiler
