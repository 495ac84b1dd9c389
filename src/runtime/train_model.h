// The model a training run trains: a layer-list model (graph/model.h), the gpt decoder
// (graph/gpt_model.h) or a graph built by a function (an imported ONNX model, a ResNet, the bert
// encoder). All build, initialise and compile through the functions below, so the trainers
// (train_chip.h, host_run.h) and the run loop take any.
//
// Contract: build_train_model is graph::build_model, graph::build_gpt or `build`;
// init_train_params is graph::init_params or graph::init_gpt_params of the built model, or
// `initial` (parameters in the order of its Model::params); a gpt's name (spec.name) is "gpt"; a
// built model's spec holds its name and per-sample input shape only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compiler/compiler.h"
#include "core/spec.h"
#include "graph/bert_model.h"
#include "graph/gpt_model.h"
#include "graph/model.h"

namespace tessera::runtime {

struct TrainModel {
  graph::ModelSpec spec;              // a layer-list model; for gpt only spec.name ("gpt")
  std::optional<graph::GptSpec> gpt;  // set: the gpt decoder of these sizes
  // set: the model of each batch size, from the initial parameters `initial` (seed unused)
  std::function<graph::Model(int batch)> build;
  std::vector<std::vector<float>> initial;
  // With `build`, for a model with state (graph::Model::state: batch normalisation's running
  // averages): its initial values in Model::state order, and the model evaluation runs (the
  // state read, not updated); both empty for a model without state.
  std::vector<std::vector<float>> initial_state;
  std::function<graph::Model(int batch)> build_eval;
  // set (with `build`): the bert encoder of these sizes, which takes text like gpt
  std::optional<graph::BertSpec> bert;

  TrainModel() = default;
  // Implicit: every layer-list model is a training model.
  TrainModel(graph::ModelSpec layers) : spec(std::move(layers)) {}  // NOLINT
  explicit TrainModel(const graph::GptSpec& sizes);

  const std::string& name() const { return spec.name; }
  // Tokens per sample of a model that takes text (gpt's context, bert's seq); 0: it takes images.
  int context() const { return gpt ? gpt->context : bert ? bert->seq : 0; }
};

graph::Model build_train_model(const TrainModel& model, int batch);
std::vector<std::vector<float>> init_train_params(const TrainModel& model, const graph::Model& m,
                                                  uint64_t seed);
// compiler::compile of the built model (options.batch is the batch); an inference program
// (options.training false) of a model with build_eval compiles build_eval's model.
compiler::CompiledProgram compile_train_model(const TrainModel& model, const core::CoreSpec& spec,
                                              const compiler::CompileOptions& options);

}  // namespace tessera::runtime
