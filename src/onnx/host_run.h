// An imported model on the host reference executor (graph/executor.h, fp32 numerics).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "onnx/importer.h"

namespace tessera::onnx_import {

// Checks that `t` fits model input `k`: the same kind of element type (float for an f32 input,
// an integer type for an i32 one) and the same shape. Error naming `where` (the file) otherwise.
Tensor input_tensor(const ImportedModel& m, size_t k, const onnx::TensorProto& t,
                    const std::string& where);

// The model's outputs in order: computed ones as float tensors of their value's shape, the values
// read by `read(value id)`; folded ones as they were folded.
std::vector<Tensor> model_outputs(const ImportedModel& m,
                                  const std::function<std::vector<float>(int)>& read);

// Binds one tensor per model input (inputs order) and the parameters, runs the fp32 executor and
// returns every output (graph outputs as float tensors, folded ones as they were folded).
std::vector<Tensor> run_on_host(const ImportedModel& m, const std::vector<Tensor>& inputs);

}  // namespace tessera::onnx_import
