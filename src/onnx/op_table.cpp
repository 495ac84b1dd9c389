#include "onnx/op_table.h"

namespace tessera::onnx_import {

const OpTable& op_table() {
  static const OpTable table = [] {
    OpTable t;
    add_math_ops(t);
    add_nn_ops(t);
    add_shape_ops(t);
    return t;
  }();
  return table;
}

std::vector<std::string> supported_op_types() {
  std::vector<std::string> names;
  for (const auto& [name, row] : op_table()) names.push_back(name);
  return names;
}

}  // namespace tessera::onnx_import
