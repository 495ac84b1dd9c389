#include "mapper/rl_placer.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/error.h"
#include "mapper/placers.h"

namespace tessera::mapper {

std::vector<double> node_priority(const CoreProblem& pb) {
  std::vector<double> p(pb.n(), 0.0);
  for (const Edge& e : pb.edges) {
    p[e.src] += std::fabs(e.weight);
    p[e.dst] += std::fabs(e.weight);
  }
  return p;
}

std::vector<int> resolve_conflicts(const CoreProblem& pb, const std::vector<int>& desired,
                                   const std::vector<double>& priority) {
  const int n = pb.n();
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return priority[a] > priority[b]; });
  std::vector<char> used(pb.width * pb.height, 0);
  std::vector<int> pos(n, -1);
  for (int v : order)  // winners: the first (highest-priority) claimant of each core
    if (!used[desired[v]]) {
      used[desired[v]] = 1;
      pos[v] = desired[v];
    }
  for (int v : order)  // losers, in priority order, to the nearest free core
    if (pos[v] < 0) {
      pos[v] = nearest_free(pb, desired[v], used);
      TESSERA_CHECK(pos[v] >= 0, "no free core left for a logical node");
      used[pos[v]] = 1;
    }
  return pos;
}

std::vector<int> position_cores(const CoreProblem& pb) {
  return hilbert_order(pb.width, pb.height, pb.free);
}

std::vector<int> argmax_positions(const Eigen::VectorXd& mu, int m, double bound) {
  std::vector<int> out(mu.size());
  const double step = m > 1 ? 2.0 * bound / (m - 1) : 1.0;
  for (int i = 0; i < mu.size(); ++i)
    out[i] = std::clamp(static_cast<int>(std::lround((mu[i] + bound) / step)), 0, m - 1);
  return out;
}

std::vector<int> place_rl(const CoreProblem& pb, const Policy& policy) {
  if (pb.n() == 0) return {};
  PolicyInput in = make_policy_input(pb);
  std::vector<int> cores = position_cores(pb);
  std::vector<int> posn =
      argmax_positions(policy.forward(in), static_cast<int>(cores.size()), policy.bound());
  std::vector<int> desired(pb.n());
  for (int v = 0; v < pb.n(); ++v) desired[v] = cores[posn[v]];
  return resolve_conflicts(pb, desired, node_priority(pb));
}

std::vector<double> node_costs(const CoreProblem& pb, const std::vector<int>& pos) {
  std::vector<double> c(pb.n(), 0.0);
  for (const Edge& e : pb.edges) {
    double d = e.weight * pb.dist(pos[e.src], pos[e.dst]);
    c[e.src] += d;
    c[e.dst] += d;
  }
  return c;
}

double core_reward(const CoreProblem& pb, const std::vector<int>& pos, TurnModel model) {
  MeshRouter router(model, pb.width, pb.height);
  double cc[kNumDirs] = {0, 0, 0, 0};
  for (const Edge& e : pb.edges)
    for (Dir d : router.route(pos[e.src], pos[e.dst], e.weight))
      cc[static_cast<int>(d)] += e.weight;
  return -(std::max(cc[0], cc[1]) + std::max(cc[2], cc[3]));
}

double ppo_objective(const Policy& policy, const std::vector<PpoItem>& batch, double eps,
                     Eigen::VectorXd* grad) {
  double total = 0.0;
  long decisions = 0;
  if (grad) *grad = Eigen::VectorXd::Zero(policy.num_params());
  for (const PpoItem& it : batch) {
    PolicyTape tape;
    Eigen::VectorXd mu = policy.forward(*it.input, &tape);
    Eigen::VectorXd g_mu = Eigen::VectorXd::Zero(mu.size());
    const double step = it.positions > 1 ? 2.0 * policy.bound() / (it.positions - 1) : 1.0;
    const double sigma = policy.sigma_steps() * step;
    for (int i = 0; i < mu.size(); ++i) {
      Eigen::VectorXd lp =
          position_log_probs(mu[i], it.positions, policy.bound(), policy.sigma_steps());
      double r = std::exp(lp[it.actions[i]] - it.old_logp[i]);
      double a = it.node_advantage.empty() ? it.advantage : it.node_advantage[i];
      double unclipped = r * a, clipped = std::clamp(r, 1.0 - eps, 1.0 + eps) * a;
      total += std::min(unclipped, clipped);
      // d/dmu of the unclipped term when it is the minimum: A * r * dlogp/dmu, with
      // dlogp/dmu = (z_a - E[z]) / sigma^2 for the discretised Gaussian.
      if (grad && unclipped <= clipped && it.positions > 1) {
        double ez = 0.0;
        for (int j = 0; j < it.positions; ++j) ez += std::exp(lp[j]) * (-policy.bound() + j * step);
        double za = -policy.bound() + it.actions[i] * step;
        g_mu[i] = a * r * (za - ez) / (sigma * sigma);
      }
    }
    decisions += mu.size();
    if (grad) *grad += policy.backward(*it.input, tape, g_mu);
  }
  if (decisions == 0) return 0.0;
  if (grad) *grad /= static_cast<double>(decisions);
  return total / static_cast<double>(decisions);
}

}  // namespace tessera::mapper
