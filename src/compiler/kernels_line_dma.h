// DMAs per "line" as counted loops: the data-movement kernels (padding, im2col, pooling taps,
// transposed scatters) issue the same few DMAs for every line (n, r) of a tensor, at addresses
// affine in the image n and the line r. Emitting them as two nested loops (images outer, lines
// inner; a loop of one trip is emitted straight) keeps the code size independent of the batch
// and the spatial size.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "compiler/codegen.h"

namespace tessera::compiler {

// base + n * per_image + r * per_line: a word address of line (n, r).
struct LineAddr {
  int64_t base = 0, per_image = 0, per_line = 0;
};

// Per line, DMA j moves with descriptor (or count) `desc` from src(n, r) + offsets[j][1] to
// dst(n, r) + offsets[j][0].
struct LineDmas {
  isa::Opcode op;
  int64_t desc;
  LineAddr dst, src;
  std::vector<std::array<int64_t, 2>> offsets{{0, 0}};
};

// Lines n in [n0, n0 + images) x r in [r0, r0 + rows).
void emit_line_loops(Codegen& cg, const LineDmas& d, int64_t n0, int64_t images, int64_t r0,
                     int64_t rows);
// Lines l in [l0, l0 + count) numbered l = n * per_image + r: a partial first image, whole
// images, a partial last image.
void emit_line_range(Codegen& cg, const LineDmas& d, int64_t l0, int64_t count, int64_t per_image);

}  // namespace tessera::compiler
