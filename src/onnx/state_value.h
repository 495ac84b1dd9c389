// A graph value an imported model carries from one training step to the next without training
// it (BatchNormalization's running averages when the import keeps them as state): a graph input
// named after the file's initializer, the node output that holds its next value (-1 when the
// graph only reads it) and the initializer's values.
#pragma once

#include <string>
#include <vector>

namespace tessera::onnx_import {

// How BatchNormalization nodes treat their statistics (ImportOptions::batch_norm).
enum class BatchNormStatistics : unsigned char {
  // Inference nodes fold input_mean and input_var into constants; training-mode nodes (opset >=
  // 14) use batch statistics and output ONNX's running averages.
  kAsInFile,
  // Every node trains (batch statistics); input_mean and input_var are state, updated as PyTorch
  // updates them (graph/batch_norm.h: momentum 1 - the node's momentum, the unbiased variance).
  kTrainState,
  // Every node infers from input_mean and input_var, read as state.
  kEvalState,
};

struct StateValue {
  std::string name;
  int value = -1;
  int update = -1;
  std::vector<float> initial;
};

}  // namespace tessera::onnx_import
