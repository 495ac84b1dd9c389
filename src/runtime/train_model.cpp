#include "runtime/train_model.h"

namespace tessera::runtime {

TrainModel::TrainModel(const graph::GptSpec& sizes) : gpt(sizes) {
  spec.name = "gpt";
}

graph::Model build_train_model(const TrainModel& model, int batch) {
  if (model.build) return model.build(batch);
  return model.gpt ? graph::build_gpt(*model.gpt, batch) : graph::build_model(model.spec, batch);
}

std::vector<std::vector<float>> init_train_params(const TrainModel& model, const graph::Model& m,
                                                  uint64_t seed) {
  if (model.build) return model.initial;
  return model.gpt ? graph::init_gpt_params(m, seed) : graph::init_params(m, seed);
}

compiler::CompiledProgram compile_train_model(const TrainModel& model, const core::CoreSpec& spec,
                                              const compiler::CompileOptions& options) {
  if (!model.gpt && !model.build) return compiler::compile(model.spec, spec, options);
  if (!options.training && model.build_eval)
    return compiler::compile(model.build_eval(options.batch), spec, options);
  return compiler::compile(build_train_model(model, options.batch), spec, options);
}

}  // namespace tessera::runtime
