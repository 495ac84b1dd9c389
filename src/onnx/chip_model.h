// An imported model on the simulated tensor core: one forward pass (inference).
//
// inference_model() gives the graph the compiler's inference-only contract (compiler/compiler.h):
// the ONNX graph's one input is x (its first dimension the batch; f32, or i32 ids that a Gather
// turns into an embedding), its one computed output
// the logits (any shape that keeps the batch); no labels, no loss. Every initializer the graph
// consumes is a parameter written to HBM before the run. Models with other inputs or outputs are
// an Error saying which.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/compiler.h"
#include "core/spec.h"
#include "graph/model.h"
#include "onnx/importer.h"

namespace tessera::onnx_import {

graph::Model inference_model(const ImportedModel& m);
compiler::CompiledProgram compile_inference(const ImportedModel& m, const core::CoreSpec& spec);

struct LayerTime {
  std::string layer;  // the MXU kernel's layer: its weight's name (compiler/mxu_regions.h)
  int64_t cycles = 0, macs = 0;
};

struct ChipRun {
  std::vector<float> output;  // the ONNX output, row-major
  int64_t cycles = 0, bundles = 0, mxu_macs = 0;
  double seconds = 0;
  double mxu_utilisation = 0;     // busy cycles of the MXU unit / cycles
  std::vector<LayerTime> layers;  // per MXU kernel, program order
  nlohmann::ordered_json stats;   // the core's statistics (core::Core::stats)
};

// Runs the forward pass on one core of `spec` with `input` (x's elements, row-major; float for
// an f32 input, integer for an i32 one, as input_tensor checks).
ChipRun run_on_chip(const ImportedModel& m, const core::CoreSpec& spec, const Tensor& input);

}  // namespace tessera::onnx_import
