// Host tensors of the importer: ONNX TensorProto <-> values, and TensorProto files (.pb).
//
// A Tensor holds either floating-point data (FLOAT, DOUBLE: kept as double, rounded to f32 when it
// becomes a graph value) or integer data (INT8..INT64, UINT8..UINT32, BOOL: kept as int64), shape
// outermost first, row-major. Other element types are an Error naming the tensor and the type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "graph/tensor.h"

namespace tessera::onnx_import {

// v rounded toward zero and saturated to the int64 range (NaN: 0).
int64_t saturate(double v);

struct Tensor {
  graph::Shape shape;
  bool integer = false;
  std::vector<double> f;   // !integer
  std::vector<int64_t> i;  // integer

  int64_t size() const {
    return integer ? static_cast<int64_t>(i.size()) : static_cast<int64_t>(f.size());
  }
  double at(int64_t k) const { return integer ? static_cast<double>(i[k]) : f[k]; }
  // Element k as an index (integer tensors exactly, float ones saturated).
  int64_t index(int64_t k) const { return integer ? i[k] : saturate(f[k]); }
  std::vector<float> floats() const;
  std::vector<int32_t> ints32(const std::string& where) const;
};

// The ONNX name of an element type ("FLOAT", "INT64", ...).
std::string elem_type_name(int32_t elem_type);
bool is_integer_type(int32_t elem_type);
bool is_float_type(int32_t elem_type);

Tensor from_proto(const onnx::TensorProto& t, const std::string& where);
onnx::TensorProto to_proto(const std::string& name, const graph::Shape& shape,
                           const std::vector<float>& data);

// A TensorProto file: Error "<path>: ..." when it cannot be read or parsed.
onnx::TensorProto read_tensor_file(const std::string& path);
void write_tensor_file(const std::string& path, const onnx::TensorProto& t);

}  // namespace tessera::onnx_import
