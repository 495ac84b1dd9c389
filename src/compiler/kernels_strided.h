// Data movement over strided views of HBM (broadcast, slice and its gradient, concat) by DMA, and
// sum_to (broadcast's adjoint) as sequential sums on the vector unit. Copies are bit-exact; sum_to
// adds in the host's order (graph/elementwise_kernels.h: y = 0, then x's elements ascending).
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

// out (shape `small`, which broadcasts to `big`) = sum_to(x of shape `big`); x's elements are
// rearranged into HBM scratch first unless every summed dim precedes every kept one.
void emit_sum_to(Codegen& cg, HbmScratch& scratch, const std::string& name, int64_t x,
                 const std::vector<int64_t>& big, const std::vector<int64_t>& small, int64_t out);

}  // namespace tessera::compiler
