#include "onnx/tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "common/error.h"
#include "common/file_io.h"
#include "graph/graph.h"

namespace tessera::onnx_import {

namespace {

using TP = onnx::TensorProto;

template <typename T>
std::vector<T> raw_as(const std::string& raw, int64_t n, const std::string& where) {
  if (static_cast<int64_t>(raw.size()) != n * static_cast<int64_t>(sizeof(T)))
    throw Error(where, "raw_data holds " + std::to_string(raw.size()) + " bytes; the shape needs " +
                           std::to_string(n * static_cast<int64_t>(sizeof(T))));
  std::vector<T> v(static_cast<size_t>(n));
  if (n > 0) std::memcpy(v.data(), raw.data(), raw.size());
  return v;
}

template <typename T, typename Field>
void take(std::vector<T>& out, const Field& field, int64_t n, const std::string& where) {
  if (static_cast<int64_t>(field.size()) != n)
    throw Error(where, "holds " + std::to_string(field.size()) + " elements; the shape needs " +
                           std::to_string(n));
  out.assign(field.begin(), field.end());
}

template <typename T>
void take_ints(Tensor& t, const TP& p, int64_t n, const std::string& where) {
  t.integer = true;
  if (p.has_raw_data()) {
    const std::vector<T> v = raw_as<T>(p.raw_data(), n, where);
    t.i.assign(v.begin(), v.end());
  } else if constexpr (std::is_same_v<T, int64_t>) {
    take(t.i, p.int64_data(), n, where);
  } else if constexpr (std::is_same_v<T, uint32_t>) {
    take(t.i, p.uint64_data(), n, where);
  } else {
    take(t.i, p.int32_data(), n, where);
  }
}

}  // namespace

int64_t saturate(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2e18) return std::numeric_limits<int64_t>::max();
  if (v <= -9.2e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

std::vector<float> Tensor::floats() const {
  std::vector<float> out(static_cast<size_t>(size()));
  for (int64_t k = 0; k < size(); ++k) out[k] = static_cast<float>(at(k));
  return out;
}

std::vector<int32_t> Tensor::ints32(const std::string& where) const {
  std::vector<int32_t> out(static_cast<size_t>(size()));
  for (int64_t k = 0; k < size(); ++k) {
    const double v = at(k);
    if (v != std::floor(v) || v < std::numeric_limits<int32_t>::min() ||
        v > std::numeric_limits<int32_t>::max())
      throw Error(where, "element " + std::to_string(k) + " (" + std::to_string(v) +
                             ") is not a 32-bit integer");
    out[k] = static_cast<int32_t>(v);
  }
  return out;
}

std::string elem_type_name(int32_t elem_type) {
  if (!TP::DataType_IsValid(elem_type)) return "type " + std::to_string(elem_type);
  return TP::DataType_Name(static_cast<TP::DataType>(elem_type));
}

bool is_integer_type(int32_t t) {
  switch (t) {
    case TP::INT8:
    case TP::INT16:
    case TP::INT32:
    case TP::INT64:
    case TP::UINT8:
    case TP::UINT16:
    case TP::UINT32:
    case TP::BOOL:
      return true;
    default:
      return false;
  }
}

bool is_float_type(int32_t t) {
  return t == TP::FLOAT || t == TP::DOUBLE;
}

Tensor from_proto(const TP& p, const std::string& where) {
  Tensor t;
  for (int64_t d : p.dims()) {
    if (d < 0) throw Error(where, "negative dimension " + std::to_string(d));
    t.shape.push_back(d);
  }
  const int64_t n = graph::num_elements(t.shape);
  if (n > graph::Graph::kMaxElements)
    throw Error(where, "shape " + graph::shape_str(t.shape) + " is too large");
  if (p.data_location() == TP::EXTERNAL)
    throw Error(where, "external data is not resolved (it is read for initializers only)");
  switch (p.data_type()) {
    case TP::FLOAT:
      if (p.has_raw_data()) {
        const std::vector<float> v = raw_as<float>(p.raw_data(), n, where);
        t.f.assign(v.begin(), v.end());
      } else {
        take(t.f, p.float_data(), n, where);
      }
      return t;
    case TP::DOUBLE:
      if (p.has_raw_data())
        t.f = raw_as<double>(p.raw_data(), n, where);
      else
        take(t.f, p.double_data(), n, where);
      return t;
    case TP::INT64:
      take_ints<int64_t>(t, p, n, where);
      return t;
    case TP::INT32:
      take_ints<int32_t>(t, p, n, where);
      return t;
    case TP::INT16:
      take_ints<int16_t>(t, p, n, where);
      return t;
    case TP::INT8:
      take_ints<int8_t>(t, p, n, where);
      return t;
    case TP::UINT8:
    case TP::BOOL:
      take_ints<uint8_t>(t, p, n, where);
      return t;
    case TP::UINT16:
      take_ints<uint16_t>(t, p, n, where);
      return t;
    case TP::UINT32:
      take_ints<uint32_t>(t, p, n, where);
      return t;
    default:
      throw Error(where, "element type " + elem_type_name(p.data_type()) + " is not supported");
  }
}

TP to_proto(const std::string& name, const graph::Shape& shape, const std::vector<float>& data) {
  TP t;
  t.set_name(name);
  t.set_data_type(TP::FLOAT);
  for (int64_t d : shape) t.add_dims(d);
  t.set_raw_data(std::string(reinterpret_cast<const char*>(data.data()), 4 * data.size()));
  return t;
}

TP read_tensor_file(const std::string& path) {
  const std::string bytes = read_file(path, "tensor file", EmptyFile::kAllowed);
  TP t;
  if (!t.ParseFromString(bytes))
    throw Error(path, "not an ONNX TensorProto (the bytes do not parse)");
  return t;
}

void write_tensor_file(const std::string& path, const TP& t) {
  write_file(path, t.SerializeAsString(), "tensor file");
}

}  // namespace tessera::onnx_import
