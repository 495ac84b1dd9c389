// An imported model on the host reference executor (graph/executor.h, fp32 numerics).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
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

// --input flags "NAME=FILE.pb" read into name -> (path, tensor); a malformed flag is a
// UsageError, an unreadable file an Error naming it.
std::map<std::string, std::pair<std::string, onnx::TensorProto>> read_input_files(
    const std::vector<std::string>& flags);

// Each file's dims become its input's shape in options.input_shapes (binding symbolic dims).
void bind_input_shapes(
    const std::map<std::string, std::pair<std::string, onnx::TensorProto>>& files,
    ImportOptions& options);

// How an output matches its expected value: the largest |actual - expected| against the largest
// |expected| (their ratio is the largest error relative to the output's scale), and over the rows
// of the last axis how often the largest element (top-1) is at the same index.
struct OutputMatch {
  double max_abs_error = 0, max_abs_expected = 0;
  int64_t rows = 0, top1_agree = 0;
  double relative_error() const {
    return max_abs_expected > 0 ? max_abs_error / max_abs_expected : max_abs_error;
  }
};
// Error when the shapes differ.
OutputMatch compare_output(const Tensor& actual, const Tensor& expected);

}  // namespace tessera::onnx_import
