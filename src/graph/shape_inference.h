// Shape and dtype inference, one case per op (ops.def).
#pragma once

#include <vector>

#include "graph/graph.h"

namespace tessera::graph {

struct InferredType {
  Shape shape;
  DType dtype;
};

// Output type of `op` applied to `inputs` with `attrs`. Throws tessera::Error with where = the op
// mnemonic and why = the problem and the operand shapes, e.g.
// "matmul: inner dimensions differ: a [4, 3] x b [5, 2]".
InferredType infer_type(OpKind op, const std::vector<const Value*>& inputs, const Attrs& attrs);

// Output spatial size of a convolution or pooling window sweep: (in + 2*pad - k) / stride + 1.
int64_t window_out_size(int64_t in, int64_t k, int stride, int pad);

}  // namespace tessera::graph
