#include "graph/optimizer.h"

#include "common/error.h"
#include "numerics/optimizer.h"
#include "numerics/sparse_optimizer.h"

namespace tessera::graph {

OptimizerKind optimizer_from_name(const std::string& name) {
  if (name == "sgd") return OptimizerKind::kSgd;
  if (name == "adam") return OptimizerKind::kAdam;
  throw Error("optimizer", "unknown optimizer '" + name + "' (known: sgd, adam)");
}

Optimizer::Optimizer(const OptimizerConfig& config, const std::vector<int64_t>& sizes)
    : m_config(config), m_sizes(sizes) {
  const int copies = config.kind == OptimizerKind::kAdam ? 2 : 1;
  for (int c = 0; c < copies; ++c)
    for (int64_t n : sizes) m_state.emplace_back(static_cast<size_t>(n), 0.0f);
}

void Optimizer::step(const std::vector<float*>& params, const std::vector<const float*>& grads) {
  TESSERA_CHECK(params.size() == m_sizes.size() && grads.size() == m_sizes.size(),
                "optimizer step: parameter count differs from construction");
  ++m_steps;
  const size_t np = m_sizes.size();
  if (m_config.kind == OptimizerKind::kSgd) {
    const auto c = numerics::sgd_constants(m_config.lr, m_config.momentum);
    for (size_t i = 0; i < np; ++i)
      numerics::sgd_momentum_update(params[i], m_state[i].data(), grads[i],
                                    static_cast<long>(m_sizes[i]), c);
    return;
  }
  if (m_config.kind == OptimizerKind::kAdagrad) {
    const float clr = numerics::adagrad_step_lr(m_config.lr, m_config.lr_decay, m_steps);
    const auto eps = static_cast<float>(m_config.eps);
    for (size_t i = 0; i < np; ++i)
      numerics::adagrad_update(params[i], m_state[i].data(), grads[i], m_sizes[i], clr, eps);
    return;
  }
  const auto c = numerics::adam_constants(m_config.beta1, m_config.beta2, m_config.eps);
  const auto s = numerics::adam_step_scalars(m_config.lr, m_config.beta1, m_config.beta2, m_steps);
  for (size_t i = 0; i < np; ++i)
    numerics::adam_update(params[i], m_state[i].data(), m_state[np + i].data(), grads[i],
                          static_cast<long>(m_sizes[i]), c, s);
}

}  // namespace tessera::graph
