// A matrix product whose left operand is a permuted tensor flattened to rows, A = flatten(
// permute(y, perm)) [N, K] with perm[0] = 0 (the layout permute an NHWC -> NCHW Flatten leaves
// before a Gemm), times a constant B [K, M]: the same products are flatten(y) times B with its
// rows reordered to y's element order, so no permute kernel runs (forward or backward). The
// reordered B is a parameter when B is one (a fixed reordering of its rows trains the same).
#pragma once

#include "onnx/context.h"
#include "onnx/tensor.h"

namespace tessera::onnx_import {

// When `a` is such a flattening: returns flatten(y) and reorders `b`'s rows; else -1, `b` as it
// was.
int unpermuted_rows(Context& c, int a, Tensor& b);

}  // namespace tessera::onnx_import
