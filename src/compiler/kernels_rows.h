// Last-axis row kernels of the transformer ops (layer_norm, softmax and their gradients) on the
// vector unit, the reduce unit (row sums and maxima) and the EUP (rsqrt, exp, rcp), with exactly
// the arithmetic of the host reference's chip numerics (graph/transformer_kernels.h).
//
// A tensor is [rows, D] (every leading dim folded into rows). A row of D values is cpr =
// ceil(D / L) blocks of L lanes; a vector register holds block j of S consecutive rows (one row
// per sublane), so the reduce unit's per-sublane tree gives one partial per row and block. The
// host's tree over D values (numerics::tree_sum / tree_max: padded to the next power of two) is
// rebuilt exactly: lanes past the row's end carry the identity (for sums +0 up to the next power
// of two and -0 past it, so that the wider tree of the L lanes adds only exact identities; -Inf
// for maxima), and the block partials combine pairwise over the next power of two of cpr blocks,
// absent blocks being the identity.
// Tiles: chunks of whole rows (a multiple of S) sized to the configured vector memory; a row that
// cannot fit is an Error naming the tensor and the sizes.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/codegen.h"
#include "compiler/kernels_conv.h"

namespace tessera::compiler {

// y = layer_norm(x) * gain + bias over rows of D (gain, bias: [D]).
void emit_layer_norm(Codegen& cg, const std::string& name, int64_t x, int64_t gain, int64_t bias,
                     int64_t y, int64_t rows, int64_t D, double eps);
// dx of layer_norm from dy, x and gain.
void emit_layer_norm_grad(Codegen& cg, const std::string& name, int64_t dy, int64_t x, int64_t gain,
                          int64_t dx, int64_t rows, int64_t D, double eps);
// out[D] = the column sums (numerics::column_sum) of dy * xhat over the rows; the products go
// through HBM scratch.
void emit_layer_norm_gain_grad(Codegen& cg, HbmScratch& scratch, const std::string& name,
                               int64_t dy, int64_t x, int64_t out, int64_t rows, int64_t D,
                               double eps);

// Softmax over the last axis of `batches` matrices of S x T; causal masks column t > s + T - S
// (S <= T: every row keeps a column).
void emit_softmax(Codegen& cg, const std::string& name, int64_t x, int64_t y, int64_t batches,
                  int64_t S, int64_t T, bool causal);
// dx = y * (dy - row sum of dy * y) over rows of T.
void emit_softmax_grad(Codegen& cg, const std::string& name, int64_t dy, int64_t y, int64_t dx,
                       int64_t rows, int64_t T);

// Softmax cross-entropy over [batch, classes] logits with int32 labels, any class count (the
// arithmetic of kernels.h emit_softmax_xent): the loss (loss >= 0: one word, the mean over the
// rows, numerics::column_sum order) and/or the gradient (grad >= 0: [batch, classes]).
void emit_softmax_xent_rows(Codegen& cg, const std::string& name, int64_t logits, int64_t labels,
                            int64_t loss, int64_t grad, int64_t batch, int64_t classes);

}  // namespace tessera::compiler
