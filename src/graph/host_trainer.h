// Training on the host reference executor: the oracle the simulated chip's training must match
// (chip numerics: bit-identical weights) and the fp32 baseline of the speed benchmark.
//
// One step on n samples: bind the input (images, or the byte ids of text windows) and labels (one
// per sample, or one per position) and the current parameters, run the training graph
// (forward + loss + backward) for batch size n, then Optimizer::step. A graph is built per batch
// size on first use (the last partial batch of an epoch gets its own), all sharing the same
// parameters and optimizer state. A model's state values (keep_state) are bound like the
// parameters and replaced by their updates after each training step.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "graph/autodiff.h"
#include "graph/executor.h"
#include "graph/model.h"
#include "graph/optimizer.h"

namespace tessera::graph {

struct EvalResult {
  double loss_sum = 0;      // sum over samples of the per-batch mean loss times the batch size
  int64_t correct = 0;      // argmax(logits) == label (first maximum wins)
  int64_t predictions = 0;  // labels predicted: samples x positions (one per sample for images)
  int64_t samples = 0;
};

class HostTrainer {
 public:
  // mode: kF32 or kChip. Parameters from init_params(build_model(spec, batch), seed).
  HostTrainer(const ModelSpec& spec, int batch, Numerics mode, const OptimizerConfig& opt,
              uint64_t seed, bool use_blas = true);
  // A model `build` makes for any batch size (e.g. graph::build_gpt), from `params`.
  HostTrainer(std::function<Model(int batch)> build, std::vector<std::vector<float>> params,
              int batch, Numerics mode, const OptimizerConfig& opt, bool use_blas = true);
  ~HostTrainer();

  // One step on n samples (images: n x sample elements, row-major; ids: n x sample int32 values
  // for a model whose input is integer). Returns the loss before the update.
  float step(const float* images, const int32_t* labels, int n);
  float step(const int32_t* ids, const int32_t* labels, int n);
  // Forward only on n samples; adds to `acc` (an argmax prediction per label).
  void evaluate(const float* images, const int32_t* labels, int n, EvalResult& acc);
  void evaluate(const int32_t* ids, const int32_t* labels, int n, EvalResult& acc);

  // A model with state (Model::state: batch normalisation's running averages): `initial` in
  // Model::state order, bound before every run; a training step replaces each updated value with
  // its update. Evaluation runs `build_eval`'s model (the same parameters and state).
  void keep_state(std::vector<std::vector<float>> initial, std::function<Model(int)> build_eval);
  std::vector<std::vector<float>>& state() { return m_state; }

  std::vector<std::vector<float>>& params() { return m_params; }
  Optimizer& optimizer() { return m_optimizer; }
  const Model& model() const { return m_model; }
  int64_t sample_size() const;

 private:
  struct Program;
  Program& program(int n, bool training);
  // Binds n samples of input (float images or int32 ids, by the model's input type) and labels.
  void bind(Program& p, const void* x, const int32_t* labels, int n);
  float train(const void* x, const int32_t* labels, int n);
  void infer(const void* x, const int32_t* labels, int n, EvalResult& acc);

  std::function<Model(int)> m_build, m_build_eval;
  Numerics m_mode;
  bool m_use_blas;
  Model m_model;
  std::vector<std::vector<float>> m_params;
  std::vector<std::vector<float>> m_state;
  Optimizer m_optimizer;
  std::map<std::pair<int, bool>, std::unique_ptr<Program>> m_programs;
};

}  // namespace tessera::graph
