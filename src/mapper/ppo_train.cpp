// train_policy: the spec's training loop (see rl_placer.h). Cycle over the training graphs; for
// each, sample `samples` placements from the policy (positions drawn from the discretised
// Gaussians, then the conflict rule), compute their rewards and advantages (per placement or per
// node, against the group's mean), add |normalised reward| to the total; when the total reaches the
// threshold, run `epochs` Adam steps on the PPO clipped objective of the collected batch and start
// a new one. The Gaussian width decays geometrically from sigma_start to sigma_steps over the
// passes. After every pass the policy's own (most probable) placements, at the final width, are
// scored with the training reward; the best-scoring parameters are kept. A sequential policy
// samples each placement node by node (sequential.h) instead of all nodes at once and the conflict
// rule.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "mapper/placers.h"
#include "mapper/rl_placer.h"
#include "mapper/rng.h"

namespace tessera::mapper {
namespace {

class Adam {
 public:
  explicit Adam(int n, double lr)
      : m_lr(lr), m_m(Eigen::VectorXd::Zero(n)), m_v(Eigen::VectorXd::Zero(n)) {}
  // Ascent step on `grad` (we maximise the objective).
  void step(Eigen::VectorXd& p, const Eigen::VectorXd& grad) {
    ++m_t;
    m_m = 0.9 * m_m + 0.1 * grad;
    m_v = 0.999 * m_v + 0.001 * grad.cwiseProduct(grad);
    double c1 = 1.0 - std::pow(0.9, m_t), c2 = 1.0 - std::pow(0.999, m_t);
    p.array() += m_lr * (m_m.array() / c1) / ((m_v.array() / c2).sqrt() + 1e-8);
  }

 private:
  double m_lr;
  Eigen::VectorXd m_m, m_v;
  int m_t = 0;
};

// Draws an index with probabilities exp(logp); never one of probability 0 (logp = -inf, a taken
// position), even when rounding leaves the sum of the others below the draw.
int sample_index(const Eigen::VectorXd& logp, Rng& rng) {
  double u = rng.uniform(), acc = 0.0;
  int last = 0;
  for (int j = 0; j < logp.size(); ++j) {
    if (std::isinf(logp[j])) continue;
    last = j;
    acc += std::exp(logp[j]);
    if (u < acc) return j;
  }
  return last;
}

// Scales all advantages of the batch (per placement or per decision) to unit root-mean-square.
void scale_advantages(std::vector<PpoItem>& batch) {
  double sq = 0.0;
  long count = 0;
  for (const PpoItem& b : batch) {
    if (b.node_advantage.empty()) {
      sq += b.advantage * b.advantage;
      ++count;
    }
    for (double a : b.node_advantage) sq += a * a;
    count += static_cast<long>(b.node_advantage.size());
  }
  const double s = std::sqrt(sq / std::max(1L, count)) + 1e-8;
  for (PpoItem& b : batch) {
    b.advantage /= s;
    for (double& a : b.node_advantage) a /= s;
  }
}

}  // namespace

Policy train_policy(const std::vector<CoreProblem>& graphs, const TrainOptions& opt,
                    const std::function<void(int, double)>& progress, const HeldOut* held_out,
                    const std::function<void(int, double)>& held_out_progress) {
  Policy policy(opt.hidden, 1.0, opt.sigma_steps, opt.outputs, opt.inputs);
  policy.init(opt.seed);
  policy.set_layout_skip(opt.layout_skip);
  policy.set_sequential(opt.sequential);
  Rng rng(opt.seed ^ 0x5EEDULL);
  std::vector<PolicyInput> inputs;
  std::vector<Positions> positions;
  std::vector<std::vector<double>> prio;
  std::vector<double> ref, node_ref;  // |Hilbert reward| (or cost), Hilbert mean node cost
  const bool spec = opt.reward == TrainReward::kSpec;
  for (const CoreProblem& pb : graphs) {
    inputs.push_back(make_policy_input(pb));
    positions.push_back(make_positions(pb, opt.outputs, policy.bound()));
    prio.push_back(node_priority(pb));
    std::vector<int> hil = place_hilbert(pb);
    ref.push_back(
        std::max(1e-9, spec ? std::fabs(core_reward(pb, hil, opt.routing)) : core_cost(pb, hil)));
    node_ref.push_back(std::max(1e-9, 2.0 * core_cost(pb, hil) / std::max(1, pb.n())));
  }
  // The training reward of a placement of graph gi, normalised by the Hilbert placement's.
  auto reward = [&](size_t gi, const std::vector<int>& pos) {
    return (spec ? core_reward(graphs[gi], pos, opt.routing) : -core_cost(graphs[gi], pos)) /
           ref[gi];
  };
  // The policy as it would be returned: at the final width (a sequential policy's most probable
  // placement depends on it; a one-shot policy's does not).
  auto as_returned = [&] {
    Policy p = policy;
    p.set_sigma_steps(opt.sigma_steps);
    return p;
  };
  // Mean normalised reward of the policy's own (most probable) placements over the training graphs;
  // the best parameters seen, the initial ones included, are returned.
  auto evaluate = [&] {
    const Policy p = as_returned();
    double s = 0.0;
    for (size_t gi = 0; gi < graphs.size(); ++gi)
      s += reward(gi, place_rl(graphs[gi], p, inputs[gi], positions[gi], prio[gi]));
    return s / static_cast<double>(graphs.size());
  };
  auto report_held_out = [&](int it) {
    if (held_out && held_out_progress) held_out_progress(it, held_out->score(as_returned()));
  };
  // Visiting order: as given, or by increasing size for the curriculum.
  std::vector<size_t> order(graphs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  if (opt.curriculum)
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return graphs[a].n() < graphs[b].n(); });
  double best_score = evaluate();
  Eigen::VectorXd best = policy.params();
  if (progress) progress(-1, best_score);
  report_held_out(-1);
  Adam adam(policy.num_params(), opt.lr);
  std::vector<PpoItem> batch;
  double total = 0.0;
  for (int it = 0; it < opt.iterations; ++it) {
    const double frac = opt.iterations > 1 ? static_cast<double>(it) / (opt.iterations - 1) : 1.0;
    // Old and new log-probabilities of a batch must use one width: change it between batches only.
    if (batch.empty())
      policy.set_sigma_steps(opt.sigma_start * std::pow(opt.sigma_steps / opt.sigma_start, frac));
    size_t visits = graphs.size();
    if (opt.curriculum)
      visits = std::clamp<size_t>(
          static_cast<size_t>(std::ceil(static_cast<double>(graphs.size()) * 2.0 * (it + 1) /
                                        std::max(1, opt.iterations))),
          1, graphs.size());
    for (size_t vi = 0; vi < visits; ++vi) {
      const size_t gi = order[vi];
      const CoreProblem& pb = graphs[gi];
      PolicyTape tape;
      Eigen::MatrixXd mu = policy.forward(inputs[gi], &tape);
      const Eigen::MatrixXd theta = opt.sequential ? policy.head(tape) : Eigen::MatrixXd();
      // `samples` placements of this graph; their mean is the baseline of the advantage.
      std::vector<PpoItem> group;
      std::vector<std::vector<double>> share;
      double mean = 0.0;
      for (int k = 0; k < opt.samples; ++k) {
        PpoItem item{.input = &inputs[gi], .positions = &positions[gi], .problem = &pb};
        std::vector<int> pos(pb.n());
        if (opt.sequential) {
          item.old_logp.assign(pb.n(), 0.0);
          item.actions = decode_sequential(
              pb, positions[gi], mu, theta, policy.sigma_steps(),
              [&](int, const Eigen::VectorXd& lp) { return sample_index(lp, rng); },
              [&](int v, const Eigen::VectorXd& lp, const Eigen::MatrixXd&, int a) {
                item.old_logp[v] = lp[a];
              });
          for (int v = 0; v < pb.n(); ++v) pos[v] = positions[gi].cores[item.actions[v]];
        } else {
          for (int v = 0; v < pb.n(); ++v) {
            Eigen::VectorXd lp = position_log_probs(positions[gi], mu.row(v), policy.sigma_steps());
            int j = sample_index(lp, rng);
            item.actions.push_back(j);
            item.old_logp.push_back(lp[j]);
            pos[v] = positions[gi].cores[j];
          }
          pos = resolve_conflicts(pb, pos, prio[gi]);
        }
        item.advantage = reward(gi, pos);
        if (opt.node_credit) share.push_back(node_costs(pb, pos));
        mean += item.advantage / opt.samples;
        total += std::fabs(item.advantage);
        group.push_back(std::move(item));
      }
      std::vector<double> node_mean(pb.n(), 0.0);
      for (const auto& c : share)
        for (int v = 0; v < pb.n(); ++v) node_mean[v] += c[v] / opt.samples;
      for (size_t k = 0; k < group.size(); ++k) {
        PpoItem& item = group[k];
        item.advantage -= mean;
        if (opt.node_credit)
          for (int v = 0; v < pb.n(); ++v)
            item.node_advantage.push_back(-(share[k][v] - node_mean[v]) / node_ref[gi]);
        batch.push_back(std::move(item));
      }
      if (total < opt.threshold) continue;
      scale_advantages(batch);
      for (int e = 0; e < opt.epochs; ++e) {
        Eigen::VectorXd grad;
        ppo_objective(policy, batch, opt.eps, &grad);
        Eigen::VectorXd p = policy.params();
        adam.step(p, grad);
        policy.set_params(p);
      }
      batch.clear();
      total = 0.0;
    }
    double score = evaluate();
    if (score > best_score) {
      best_score = score;
      best = policy.params();
    }
    if (progress) progress(it, score);
    report_held_out(it);
  }
  policy.set_params(best);
  policy.set_sigma_steps(opt.sigma_steps);
  return policy;
}

}  // namespace tessera::mapper
