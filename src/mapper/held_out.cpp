// HeldOut (rl_placer.h): the policy's own placements on problems it is not trained on, scored
// against the greedy placement.
#include <cmath>

#include "mapper/placers.h"
#include "mapper/rl_placer.h"

namespace tessera::mapper {

HeldOut::HeldOut(std::vector<CoreProblem> problems) : m_problems(std::move(problems)) {
  for (const CoreProblem& pb : m_problems) {
    m_inputs.push_back(make_policy_input(pb));
    m_priority.push_back(node_priority(pb));
    m_greedy.push_back(std::max(1e-9, core_cost(pb, place_greedy(pb))));
  }
}

double HeldOut::score(const Policy& policy) const {
  if (m_problems.empty()) return 1.0;
  double lg = 0.0;
  for (size_t i = 0; i < m_problems.size(); ++i) {
    const CoreProblem& pb = m_problems[i];
    const Positions positions = make_positions(pb, policy.outputs(), policy.bound());
    const std::vector<int> pos = place_rl(pb, policy, m_inputs[i], positions, m_priority[i]);
    lg += std::log(std::max(1e-9, core_cost(pb, pos)) / m_greedy[i]);
  }
  return std::exp(lg / static_cast<double>(m_problems.size()));
}

}  // namespace tessera::mapper
