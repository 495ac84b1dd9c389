// ChipTrainer: training and evaluation on the simulated chip. The compiler's program for the
// step (and one per other batch size: the last partial batch) runs on one timed core whose HBM
// keeps the parameters and optimizer state across steps; before each run the host link writes the
// batch (and Adam's per-step scalars) into HBM, timed at `host_bytes_per_second`.
// The compiled programs share the parameter and state addresses (compiler/pass_plan_hbm.cpp), so
// switching programs (Core::load) keeps the training state, the model's state (batch
// normalisation's running averages) included: steps update it, evaluation reads it. A training
// step runs as its two parts (optimizer_cost.h) so the optimizer's cycles, bytes and energy are
// measured. Adam runs on the Adam unit by default (its m and v live in the unit's data cache;
// init runs once here).
// The model is a layer-list model on images, the gpt decoder on byte windows or a built model
// (an imported ONNX model, a ResNet; train_model.h):
// the batch's input (pixels, or the windows' byte ids) goes to the program's x, its labels (one
// class per sample, or the next byte at every position) to the program's labels.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "compiler/compiler.h"
#include "core/core.h"
#include "graph/host_trainer.h"
#include "runtime/chip_inference.h"
#include "runtime/optimizer_cost.h"
#include "runtime/pe_attribution.h"
#include "runtime/train_model.h"

namespace tessera::runtime {

struct ChipTrainerOptions {
  int batch = 128;
  graph::OptimizerConfig optimizer;
  uint64_t seed = 0;
  double host_bytes_per_second = 16e9;                 // host link into HBM
  compiler::AdamOn adam_on = compiler::AdamOn::kUnit;  // Adam: on the Adam unit or the vector unit
  // A gpt's token embedding: on the tensor core, or on the sparse core (sparse_step_host.h).
  compiler::EmbeddingOn embedding_on = compiler::EmbeddingOn::kTensorCore;
  report::TraceSink* trace = nullptr;  // the core's activity, every step and evaluation, or none
};

class ChipTrainer {
 public:
  ChipTrainer(const TrainModel& model, const core::CoreSpec& spec,
              const ChipTrainerOptions& options);

  // One training step on n samples (images, or the byte ids of n windows); returns the loss
  // (computed on the chip) before the update.
  float step(const float* images, const int32_t* labels, int n);
  float step(const int32_t* ids, const int32_t* labels, int n);
  // Inference on the chip for n samples; adds loss * n and the argmax hits of every prediction to
  // `acc`.
  void evaluate(const float* images, const int32_t* labels, int n, graph::EvalResult& acc);
  void evaluate(const int32_t* ids, const int32_t* labels, int n, graph::EvalResult& acc);

  // Parameters as they are in the simulated HBM (aligned with graph::Model::params).
  std::vector<std::vector<float>> params() const;
  std::vector<std::vector<float>> optimizer_state() const;
  // Training-state import (checkpoints): the same tensors, in the same order and sizes, as
  // params() / optimizer_state() return; and the step counter (Adam's bias-correction t).
  void set_params(const std::vector<std::vector<float>>& values);
  void set_optimizer_state(const std::vector<std::vector<float>>& values);
  // The model's state (graph::Model::state: batch normalisation's running averages) as it is in
  // the simulated HBM, in Model::state order; empty for a model without state. Training steps
  // update it, evaluation reads it; set_model_state imports it (checkpoints; the constructor
  // writes TrainModel::initial_state).
  std::vector<std::vector<float>> model_state() const;
  void set_model_state(const std::vector<std::vector<float>>& values);
  void set_steps(int64_t steps);

  const core::Core& core() const { return *m_core; }
  double host_link_seconds() const { return m_host_seconds; }
  int64_t host_link_bytes() const { return m_host_bytes; }
  int64_t steps() const { return m_steps; }
  // The optimizer update's cost (optimizer_cost.h): of the last step, and summed over all steps.
  const OptimizerCost& last_optimizer_cost() const { return m_last_opt; }
  const OptimizerCost& optimizer_cost() const { return m_opt; }
  const compiler::CompiledProgram& program(int n, bool training);
  // The training step at the trainer's batch: the parameter and state addresses every program
  // of the trainer shares.
  const compiler::CompiledProgram& layout() { return program(m_options.batch, true); }
  // `program` (one of this trainer's programs or step parts) decoded for the core, once; other
  // cores of the same configuration may share it.
  std::shared_ptr<const core::DecodedProgram> decoded(const isa::Program& program);
  // The MXU work of the training steps' main parts per layer and phase (pe_attribution.h).
  const PeAttribution& pe_attribution() const { return m_pe; }

 private:
  // `x`: n samples of m_sample 32-bit values (floats or int32 ids).
  float train(const void* x, const int32_t* labels, int n);
  void infer(const void* x, const int32_t* labels, int n, graph::EvalResult& acc);
  // The batch into HBM through the host link (chip_inference.h write_batch, timed).
  void send_batch(const compiler::CompiledProgram& p, const void* x, const int32_t* labels, int n);
  // Core::load with the program decoded once (programs and step parts live as long as the trainer).
  void load(const isa::Program& program);
  const StepParts& parts(int n);
  std::vector<float> read(int64_t addr, int64_t n) const;

  TrainModel m_model;
  core::CoreSpec m_spec;
  ChipTrainerOptions m_options;
  int64_t m_sample = 0;  // input values per sample
  int64_t m_labels = 0;  // label values per sample
  std::map<std::pair<int, bool>, std::unique_ptr<compiler::CompiledProgram>> m_programs;
  std::unique_ptr<core::Core> m_core;
  double m_host_seconds = 0;
  int64_t m_host_bytes = 0;
  int64_t m_steps = 0;
  std::map<int, StepParts> m_parts;  // per batch size
  std::map<const isa::Program*, std::shared_ptr<const core::DecodedProgram>> m_decoded;
  OptimizerCost m_opt, m_last_opt;
  PeAttribution m_pe;
};

}  // namespace tessera::runtime
