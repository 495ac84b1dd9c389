// An imported ONNX model as a training model (runtime/train_model.h): `tessera train --model
// model.onnx --loss softmax-ce:OUTPUT [--label-input NAME]`.
//
// Contract: the model has one float input x whose first dim is the batch (the others static; the
// batch is bound per build, as --input-shape would) and, optionally, one integer input named by
// --label-input that becomes the labels; any other input is an Error. The loss head is softmax
// cross-entropy of the named output (logits [batch, classes]; an output of higher rank is
// flattened to [batch, rest]) against int32 labels [batch] (the input of --label-input's name, or
// a new input "labels" / that name when the model has none). Every float initializer a graph op
// consumes is a parameter, initialised with the file's values; every other float constant
// (Constant nodes, what the importer makes) is a graph constant that training never changes
// (context.h). The dataset's samples must hold x's per-sample elements
// (runtime::check_fits_model against the per-sample shape; a one-channel NCHW image [1, H, W]
// fits as [H, W, 1], its pixels in the same order). BatchNormalization trains from batch
// statistics and keeps its running averages as state (graph::Model::state, initialised with the
// file's input_mean and input_var: ImportOptions::batch_norm kTrainState, updated as PyTorch does);
// evaluation runs the model with kEvalState (the running averages). On the chip the compiled
// programs keep the state in HBM (compiler.h CompiledProgram::model_state).
// Errors name the file: an output or label input that is not in the model (the model's names
// listed), an output whose first dim is not the batch, inputs other than x and the labels; a
// missing or unknown --loss is a UsageError.
#pragma once

#include <string>

#include "graph/model.h"
#include "onnx/importer.h"
#include "runtime/train_model.h"

namespace tessera::onnx_import {

// --loss's value: "softmax-ce:OUTPUT" -> OUTPUT; anything else is a UsageError.
std::string loss_output_from_flag(const std::string& flag);

// The training model of `m` (imported with x's batch bound): forward, labels and loss.
graph::Model training_model(const ImportedModel& m, const std::string& loss_output,
                            const std::string& label_input);

// The file at `path` as a runtime::TrainModel: built per batch by import + training_model; its
// initial parameters are the file's initializers.
runtime::TrainModel onnx_train_model(const std::string& path, const std::string& loss_output,
                                     const std::string& label_input);

}  // namespace tessera::onnx_import
