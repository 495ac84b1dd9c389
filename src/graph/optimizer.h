// Host-side optimizer update (decision: the update is not a graph op). The training graph ends
// with the parameter gradients; the optimizer then updates parameters and its state in place,
// element by element, with the arithmetic of numerics/optimizer.h. The compiler lowers exactly
// that arithmetic onto the vector unit after the training graph, and the host reference calls
// it here, so both sides share one definition (Adagrad: numerics/sparse_optimizer.h). State layout
// (checkpoints): SGD: one velocity vector per parameter; Adam: m vectors for every parameter, then
// v vectors; Adagrad: one accumulator vector per parameter; plus the step count.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::graph {

enum class OptimizerKind : uint8_t { kSgd, kAdam, kAdagrad };

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::kAdam;
  double lr = 1e-3;
  double momentum = 0.9;                          // SGD
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // Adam (eps: also Adagrad's)
  double lr_decay = 0;                            // Adagrad
};

// "sgd" or "adam"; anything else throws Error.
OptimizerKind optimizer_from_name(const std::string& name);

class Optimizer {
 public:
  Optimizer(const OptimizerConfig& config, const std::vector<int64_t>& sizes);

  // One update: params[i] and grads[i] hold sizes[i] elements.
  void step(const std::vector<float*>& params, const std::vector<const float*>& grads);

  const OptimizerConfig& config() const { return m_config; }
  int64_t steps() const { return m_steps; }
  void set_steps(int64_t t) { m_steps = t; }
  std::vector<std::vector<float>>& state() { return m_state; }
  const std::vector<std::vector<float>>& state() const { return m_state; }

 private:
  OptimizerConfig m_config;
  std::vector<int64_t> m_sizes;
  std::vector<std::vector<float>> m_state;
  int64_t m_steps = 0;
};

}  // namespace tessera::graph
