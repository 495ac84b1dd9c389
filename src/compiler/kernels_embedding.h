// The embedding lookup and its gradient (graph/transformer_kernels.h) on the compiled program. The
// ids (int32, in [0, V): the host reference checks them; the chip does not) go to scalar memory
// by DMA, and the scalar unit turns each into an address:
//   embedding       per id one DMA of its table row, HBM -> vector memory, then the gathered
//                   rows back to HBM in one piece (a gather by DMA; exact);
//   embedding_grad  the table [V, D] accumulated in vector memory (+0 to start): for the rows i
//                   ascending, table row ids[i] += dy row i on the vector unit (load at the id's
//                   row, add, store masked to the row), as the host's scatter-add; then one DMA
//                   of the table to HBM.
// Tiles: chunks of ids sized to scalar and vector memory. A gradient's table that does not fit
// vector memory whole (BERT's 30,522 x 768) is accumulated in chunks of rows: per chunk every id
// is read again, and an id outside the chunk (id - t0 outside [0, rows)) adds to a discard row
// past it (scalar min and a sign mask, no branch); the order per table row is the same.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/codegen.h"

namespace tessera::compiler {

// y[i, :] = table[ids[i], :] for n ids; table [V, D].
void emit_embedding(Codegen& cg, const std::string& name, int64_t table, int64_t ids, int64_t y,
                    int64_t n, int64_t D);
// out [V, D] = +0, then out[ids[i], :] += dy[i, :] for i ascending.
void emit_embedding_grad(Codegen& cg, const std::string& name, int64_t dy, int64_t ids, int64_t out,
                         int64_t n, int64_t V, int64_t D);

}  // namespace tessera::compiler
