// Training on the host reference executor: the oracle the simulated chip's training must match
// (chip numerics: bit-identical weights) and the fp32 baseline of the speed benchmark.
//
// One step on n samples: bind images/labels and the current parameters, run the training graph
// (forward + loss + backward) for batch size n, then Optimizer::step. A graph is built per batch
// size on first use (the last partial batch of an epoch gets its own), all sharing the same
// parameters and optimizer state.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "graph/autodiff.h"
#include "graph/executor.h"
#include "graph/model.h"
#include "graph/optimizer.h"

namespace tessera::graph {

struct EvalResult {
  double loss_sum = 0;  // sum over samples of the per-batch mean loss times the batch size
  int64_t correct = 0;  // argmax(logits) == label (first maximum wins)
  int64_t samples = 0;
};

class HostTrainer {
 public:
  // mode: kF32 or kChip. Parameters from init_params(build_model(spec, batch), seed).
  HostTrainer(const ModelSpec& spec, int batch, Numerics mode, const OptimizerConfig& opt,
              uint64_t seed, bool use_blas = true);
  ~HostTrainer();

  // One step on n samples (images: n x sample elements, row-major). Returns the loss before the
  // update.
  float step(const float* images, const int32_t* labels, int n);
  // Forward only on n samples; adds to `acc`.
  void evaluate(const float* images, const int32_t* labels, int n, EvalResult& acc);

  std::vector<std::vector<float>>& params() { return m_params; }
  Optimizer& optimizer() { return m_optimizer; }
  const Model& model() const { return m_model; }
  int64_t sample_size() const;

 private:
  struct Program;
  Program& program(int n, bool training);

  ModelSpec m_spec;
  Numerics m_mode;
  bool m_use_blas;
  Model m_model;
  std::vector<std::vector<float>> m_params;
  Optimizer m_optimizer;
  std::map<std::pair<int, bool>, std::unique_ptr<Program>> m_programs;
};

}  // namespace tessera::graph
