// Data movement over strided views of HBM (broadcast, slice and its gradient, concat) by DMA, and
// sum_to (broadcast's adjoint) and reduce_max as sequential folds on the vector unit. Copies are
// bit-exact; the folds combine in the host's order (graph/elementwise_kernels.h: y = the start
// value, then x's elements ascending).
//
// A view is canonicalised first (dims of one dropped, dims that continue each other merged). Its
// elements then move through vector memory in chunks of whole indices of the first dim: 2-D DMAs
// each move a run of pieces along one dim (a piece: a contiguous run of the last dim when its
// stride is 1, else one element); one contiguous DMA moves the chunk to or from the dense side.
// A slice of the first dim that does not fit vector memory is an Error naming the tensor.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/codegen.h"
#include "compiler/kernels_conv.h"

namespace tessera::compiler {

// Element i (row-major over `shape`) at HBM word base + sum over d of i_d * strides[d]; a stride
// may be negative, or 0 (the element repeats).
struct StridedView {
  int64_t base = 0;
  std::vector<int64_t> shape, strides;
};

// Row-major strides of a dense tensor of `shape`.
std::vector<int64_t> dense_strides(const std::vector<int64_t>& shape);

// HBM [dst, dst + elements) = the view's elements in row-major order.
void emit_gather(Codegen& cg, const std::string& name, const StridedView& src, int64_t dst);
// The view's elements (distinct positions) = HBM [src, src + elements) in row-major order.
void emit_scatter(Codegen& cg, const std::string& name, int64_t src, const StridedView& dst);

// x of shape `big` as rows [R, K] for a reduction to `small` (which broadcasts to `big`): row r
// holds the elements of reduced index r (the reduced dims in x's order, row-major), K = small's
// elements in order. `arranged` is that view of x (dims of one dropped); when every reduced dim
// precedes every kept one x is those rows already (`gathered` false, rows = x), else the view is
// gathered into HBM scratch taken at `at` (scratch_take).
struct ReducedRows {
  int64_t rows = 0, R = 0, K = 0;
  bool gathered = false;
  StridedView arranged;
};
ReducedRows arrange_reduced(Codegen& cg, HbmScratch& scratch, int64_t& at, const std::string& name,
                            int64_t x, const std::vector<int64_t>& big,
                            const std::vector<int64_t>& small);

// out (shape `small`) = init, then out = combine(out, row r) for the rows of arrange_reduced in
// order (`combine` a vector-unit fp32 opcode, `init_bits` the start value's bits). The rows are
// folded in a counted loop over vector memory: the code does not grow with their number.
void emit_reduce_to(Codegen& cg, HbmScratch& scratch, const std::string& name, int64_t x,
                    const std::vector<int64_t>& big, const std::vector<int64_t>& small, int64_t out,
                    isa::Opcode combine, int32_t init_bits);
// sum_to(x of shape `big`): emit_reduce_to with vadd.f32 from +0 (the host's order).
void emit_sum_to(Codegen& cg, HbmScratch& scratch, const std::string& name, int64_t x,
                 const std::vector<int64_t>& big, const std::vector<int64_t>& small, int64_t out);

}  // namespace tessera::compiler
