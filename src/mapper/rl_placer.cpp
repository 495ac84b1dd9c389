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

std::vector<int> place_rl(const CoreProblem& pb, const Policy& policy, const PolicyInput& in,
                          const Positions& positions, const std::vector<double>& priority) {
  PolicyTape tape;
  const Eigen::MatrixXd mu = policy.forward(in, &tape);
  if (policy.sequential()) {
    std::vector<int> pos =
        decode_sequential(pb, positions, mu, policy.head(tape), policy.sigma_steps(),
                          [](int, const Eigen::VectorXd& lp) { return most_probable(lp); });
    for (int& p : pos) p = positions.cores[p];
    return pos;
  }
  std::vector<int> desired(pb.n());
  for (int v = 0; v < pb.n(); ++v)
    desired[v] = positions.cores[most_probable_position(positions, mu.row(v))];
  return resolve_conflicts(pb, desired, priority);
}

std::vector<int> place_rl(const CoreProblem& pb, const Policy& policy) {
  if (pb.n() == 0) return {};
  return place_rl(pb, policy, make_policy_input(pb),
                  make_positions(pb, policy.outputs(), policy.bound()), node_priority(pb));
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
    const Positions& positions = *it.positions;
    Eigen::MatrixXd mu = policy.forward(*it.input, &tape);
    Eigen::MatrixXd g_mu = Eigen::MatrixXd::Zero(mu.rows(), mu.cols());
    Eigen::MatrixXd g_theta;
    const double sigma = position_sigma(positions, policy.sigma_steps());
    // One decision of node i with log-probabilities lp (and, sequential, features phi).
    auto decision = [&](int i, const Eigen::VectorXd& lp, const Eigen::MatrixXd* phi) {
      const int act = it.actions[i];
      double r = std::exp(lp[act] - it.old_logp[i]);
      double a = it.node_advantage.empty() ? it.advantage : it.node_advantage[i];
      double unclipped = r * a, clipped = std::clamp(r, 1.0 - eps, 1.0 + eps) * a;
      total += std::min(unclipped, clipped);
      // d/dmu of the unclipped term when it is the minimum: A * r * dlogp/dmu, with
      // dlogp/dmu = (z_a - E[z]) / sigma^2 for the discretised Gaussian, and for the head's
      // weights dlogp/dtheta = phi_a - E[phi].
      if (!grad || unclipped > clipped || positions.size() <= 1) return;
      const Eigen::RowVectorXd off = position_offset(positions, lp, act);
      for (int k = 0; k < off.size(); ++k) g_mu(i, k) = a * r * off[k] / (sigma * sigma);
      if (phi)
        g_theta.row(i) = a * r * (phi->row(act) - lp.array().exp().matrix().transpose() * *phi);
    };
    if (policy.sequential()) {
      TESSERA_CHECK(it.problem, "a sequential policy's PPO item needs its problem");
      g_theta = Eigen::MatrixXd::Zero(mu.rows(), kHeadFeatures);
      decode_sequential(
          *it.problem, positions, mu, policy.head(tape), policy.sigma_steps(),
          [&](int v, const Eigen::VectorXd&) { return it.actions[v]; },
          [&](int v, const Eigen::VectorXd& lp, const Eigen::MatrixXd& phi, int) {
            decision(v, lp, &phi);
          });
    } else {
      for (int i = 0; i < mu.rows(); ++i)
        decision(i, position_log_probs(positions, mu.row(i), policy.sigma_steps()), nullptr);
    }
    decisions += mu.rows();
    if (grad)
      *grad += policy.backward(*it.input, tape, g_mu, policy.sequential() ? &g_theta : nullptr);
  }
  if (decisions == 0) return 0.0;
  if (grad) *grad /= static_cast<double>(decisions);
  return total / static_cast<double>(decisions);
}

}  // namespace tessera::mapper
