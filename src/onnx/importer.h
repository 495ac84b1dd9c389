// ONNX model -> graph IR (forward graph) with the parameters' initial values.
//
// Algorithm:
//   1. Every node's op type (default domain) must be in op_table.h; otherwise ONE Error lists
//      every unsupported (op type, node name) with the opset.
//   2. Graph inputs (those that are not initializers) become graph inputs: FLOAT -> f32, integer
//      types -> i32; their symbolic dims are bound by ImportOptions::input_shapes (which must
//      agree with every static dim); a dim left unbound is an Error naming the input and dim.
//   3. Initializers become constants (context.h): a float one that a graph op consumes becomes a
//      parameter; integer ones stay on the host as attributes.
//   4. Nodes in file order (ONNX requires a topological order): a node whose inputs are all
//      constants and whose op folds is computed on the host; any other is converted. A node that
//      cannot be converted (an attribute or shape outside what the graph ops cover) is recorded,
//      its outputs poisoned, and the import goes on, so the final Error lists every such node too.
//   5. Graph outputs: a graph value, or a constant when everything before it folded.
//   6. The graph keeps the nodes the outputs and the state updates depend on.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "onnx/model_file.h"
#include "onnx/state_value.h"
#include "onnx/tensor.h"

namespace tessera::onnx_import {

struct ImportOptions {
  std::map<std::string, graph::Shape> input_shapes;  // --input-shape NAME=1x3x224x224
  // Graph inputs bound to known values at import (constants, as if they were initializers).
  std::map<std::string, Tensor> constant_inputs;
  // BatchNormalization's statistics (state_value.h); training an imported model keeps them as
  // state.
  BatchNormStatistics batch_norm = BatchNormStatistics::kAsInFile;
};

struct ImportedModel {
  std::string name;
  int64_t opset = 0;
  graph::Graph graph;
  struct Input {
    std::string name;
    int value = -1;
    int32_t elem_type = 0;  // the ONNX element type
  };
  std::vector<Input> inputs;
  struct Output {
    std::string name;
    int value = -1;  // -1: folded to `constant`
    Tensor constant;
  };
  std::vector<Output> outputs;
  std::vector<std::vector<float>> params;  // initial values, graph.params() order
  // Graph inputs carried across training steps (ImportOptions::batch_norm kTrainState and
  // kEvalState), with their initial values; not in `inputs`.
  std::vector<StateValue> state;
};

ImportedModel import_model(const ModelFile& file, const ImportOptions& options = {});

// "NAME=1x3x224x224" -> (NAME, shape); a malformed flag is a UsageError.
std::pair<std::string, graph::Shape> parse_input_shape(const std::string& flag);

}  // namespace tessera::onnx_import
