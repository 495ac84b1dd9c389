// Permute (reorder a tensor's dims; the head split and merge of attention) by DMA: each chunk of
// whole output slices of the first output dim is gathered into vector memory by 2-D DMAs (each
// moves the pieces along one output dim: contiguous runs of the last dim when it stays last, else
// single elements) and written back to HBM in one piece. Pure data movement: bit-exact.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/codegen.h"

namespace tessera::compiler {

// y = x with dims reordered: y's dim i is x's dim perm[i] (x's shape `dims`, row-major; rank >= 2,
// not the identity of two dims, which is a copy).
void emit_permute(Codegen& cg, const std::string& name, int64_t x, int64_t y,
                  const std::vector<int64_t>& dims, const std::vector<int64_t>& perm);

}  // namespace tessera::compiler
