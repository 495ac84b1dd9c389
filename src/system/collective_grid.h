// The processor grid of a machine for the torus all-reduce (compiler/collectives.h
// CollectiveAlgorithm::kTorus): dimension 0 varies fastest in the processor index
// p = chip * cores_per_chip + core, and chip = y * dims_x + x on a 2-D torus, so
//   torus2d      {cores_per_chip, dims_x, dims_y}
//   ring, line   {cores_per_chip, chips}
// Each dimension's ring joins neighbours: cores of one chip (the on-chip path), chips x +- 1, chips
// y +- 1 (torus links with wrap; on a line the wrap of the chips' ring is routed back along it).
#pragma once

#include <vector>

#include "system/system_spec.h"

namespace tessera::system {

std::vector<int> collective_grid(const SystemSpec& spec);

}  // namespace tessera::system
