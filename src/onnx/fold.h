// Host evaluation of ONNX ops on constant tensors (constant folding at import). Each function
// follows the op's ONNX definition; shapes that do not fit are an Error naming the op.
#pragma once

#include <functional>
#include <vector>

#include "onnx/tensor.h"

namespace tessera::onnx_import::fold {

// The largest constant folding makes (shapes computed at import are small; a model that asks for
// more is refused rather than allocated).
inline constexpr int64_t kMaxFoldElements = int64_t{1} << 24;
// Error unless `shape` has no negative dimension and at most kMaxFoldElements elements.
void check_fold_size(const graph::Shape& shape);

// numpy broadcasting of two shapes; Error when they do not broadcast.
graph::Shape broadcast_shapes(const graph::Shape& a, const graph::Shape& b);
// Row-major strides with 0 for the dimensions `s` broadcasts along to reach `out`.
std::vector<int64_t> broadcast_strides(const graph::Shape& s, const graph::Shape& out);

// a (op) b elementwise with broadcasting; integer when both are integer.
Tensor binary(const Tensor& a, const Tensor& b, const std::function<double(double, double)>& op);
Tensor unary(const Tensor& x, const std::function<double(double)>& op);
Tensor cast(const Tensor& x, bool to_integer);
Tensor reshape(Tensor x, const graph::Shape& shape);
Tensor expand(const Tensor& x, const graph::Shape& shape);
Tensor transpose(const Tensor& x, const graph::Shape& perm);
Tensor gather(const Tensor& data, const Tensor& indices, int64_t axis);
Tensor concat(const std::vector<const Tensor*>& parts, int64_t axis);
// Per axis: start, end (exclusive; already clamped to the dimension), step (> 0 or < 0).
struct SliceAxis {
  int64_t axis, start, end, step;
};
Tensor slice(const Tensor& x, const std::vector<SliceAxis>& axes);
// The number of elements a slice keeps along one axis (steps beyond +-kMaxStep act as it).
inline constexpr int64_t kMaxStep = int64_t{1} << 62;
int64_t slice_count(int64_t start, int64_t end, int64_t step);

}  // namespace tessera::onnx_import::fold
