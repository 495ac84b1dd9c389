// The ONNX ops the importer converts: one row per op type (default domain), each with the
// converter that emits graph-IR nodes for a node of that type (ops_*.cpp, one file per family).
//
// A converter reads its inputs and attributes through the Context, binds every output it
// produces, and throws Unsupported naming the attribute or shape it cannot map. When every input
// of a node is a constant and the row has a folder, the folder computes the outputs on the host
// instead (constant folding: shape subgraphs, weight preprocessing); a folder that returns false
// leaves the node to the converter.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "onnx/context.h"

namespace tessera::onnx_import {

using Convert = void (*)(Context&);
using Fold = bool (*)(Context&);

struct OpRow {
  Convert convert = nullptr;
  Fold fold = nullptr;
};

using OpTable = std::map<std::string, OpRow>;

// The table (built once from every family).
const OpTable& op_table();
// The op types in the table, sorted.
std::vector<std::string> supported_op_types();

// Registration of each family (ops_*.cpp).
void add_math_ops(OpTable& t);
void add_nn_ops(OpTable& t);
void add_shape_ops(OpTable& t);

}  // namespace tessera::onnx_import
