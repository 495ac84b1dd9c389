// reduce_max and its gradient on the vector unit, with exactly the host's arithmetic
// (graph/elementwise_kernels.h):
//   reduce_max       -inf, then vmax.f32 with x's rows of each group in order (kernels_strided.h's
//                    emit_reduce_to; vmax.f32 is numerics::fmax_ieee, the host's max)
//   reduce_max_grad  x's rows in order against a running copy of y: where a row equals it, the
//                    row's gradient is dy and the copy becomes NaN there (NaN equals nothing, so
//                    only the first maximum of a group takes dy); elsewhere +0. Rows that were
//                    gathered (a reduced dim after a kept one) are scattered back to dx's layout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/codegen.h"
#include "compiler/kernels_conv.h"

namespace tessera::compiler {

// y (shape `small`, which broadcasts to `big`) = reduce_max(x of shape `big`).
void emit_reduce_max(Codegen& cg, HbmScratch& scratch, const std::string& name, int64_t x,
                     const std::vector<int64_t>& big, const std::vector<int64_t>& small, int64_t y);

// dx (shape `big`) = reduce_max_grad(dy and y of shape `small`, x of shape `big`).
void emit_reduce_max_grad(Codegen& cg, HbmScratch& scratch, const std::string& name, int64_t dy,
                          int64_t x, int64_t y, int64_t dx, const std::vector<int64_t>& big,
                          const std::vector<int64_t>& small);

}  // namespace tessera::compiler
