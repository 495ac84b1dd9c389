// The model flags `tessera train` and `tessera compile` share: --model, the sizes of the zoo's
// transformers (gpt, bert) and ResNets (cli/train_resnet.h), and an ONNX model's loss head.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/train_resnet.h"
#include "runtime/train_model.h"

namespace tessera::cli {

struct ModelFlags {
  std::string model = "mlp";
  // gpt / bert sizes (graph/gpt_model.h, graph/bert_model.h): unset takes the model's defaults.
  std::optional<int> d_model, heads, layers, context;
  std::string loss, label_input = "labels";  // --model x.onnx (onnx/onnx_training.h)
  ResNetFlags resnet;                        // --model resnet18|resnet50
};

// --d-model, --heads, --layers and --context.
void add_transformer_flags(CLI::App& cmd, ModelFlags& f);
// --loss and --label-input.
void add_onnx_loss_flags(CLI::App& cmd, ModelFlags& f);

// The model the flags name: an ONNX file with its loss head, gpt or bert with their sizes, a
// ResNet (on Fashion-MNIST's images, or `synthetic` 224 x 224 x 3 ones), a zoo model or a model
// JSON file; parameters initialised from `seed`. UsageError for a size out of range or a flag that
// does not belong to the model.
runtime::TrainModel model_from_flags(const ModelFlags& f, uint64_t seed, bool synthetic);

}  // namespace tessera::cli
