// Shapes, element types and host tensors of the graph IR.
//
// Contract: a Shape lists dimensions outermost first; storage is dense, contiguous and row-major
// (the last dimension varies fastest). A rank-0 shape ([]) is a scalar with one element.
// Images and activations are NHWC (batch, height, width, channels); convolution weights are HWIO
// (kernel height, kernel width, input channels, output channels); see docs/models.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::graph {

enum class DType : uint8_t { kF32, kI32 };

using Shape = std::vector<int64_t>;

const char* dtype_name(DType t);
// Product of the dimensions (1 for a scalar; INT64_MAX if the product overflows).
int64_t num_elements(const Shape& s);
// "[128, 784]"; "[]" for a scalar.
std::string shape_str(const Shape& s);

// A host tensor: shape plus contiguous row-major storage of T (double, float or int32_t).
template <typename T>
struct HostTensor {
  Shape shape;
  std::vector<T> data;

  HostTensor() = default;
  explicit HostTensor(Shape s)
      : shape(std::move(s)), data(static_cast<size_t>(num_elements(shape))) {}
  HostTensor(Shape s, std::vector<T> d) : shape(std::move(s)), data(std::move(d)) {}
  int64_t size() const { return static_cast<int64_t>(data.size()); }
};

using TensorF = HostTensor<float>;
using TensorD = HostTensor<double>;
using TensorI = HostTensor<int32_t>;

}  // namespace tessera::graph
