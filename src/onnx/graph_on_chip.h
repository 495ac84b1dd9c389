// An imported graph, whatever its inputs and outputs, run once on one simulated tensor core: every
// graph value at its own HBM address and one kernel per node (suite/row_program.h: the compiler's
// lowering without a model's contract), the inputs and parameters written to HBM before the run
// and every computed output read back after it. An op without a tensor-core lowering is the
// compiler's Error naming it.
#pragma once

#include <vector>

#include "core/spec.h"
#include "onnx/importer.h"

namespace tessera::onnx_import {

// One tensor per model input (inputs order; integer inputs as int32); returns every output
// (computed ones as float tensors, folded ones as they were folded), as run_on_host does.
std::vector<Tensor> run_graph_on_chip(const ImportedModel& m, const std::vector<Tensor>& inputs,
                                      const core::CoreSpec& spec);

}  // namespace tessera::onnx_import
