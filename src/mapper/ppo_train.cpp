// train_policy: the spec's training loop (see rl_placer.h). Cycle over the training graphs; for
// each, sample `samples` placements from the policy (positions drawn from the discretised Gaussians, then the
// conflict rule), compute their rewards (advantage = reward - the group's mean), add them to the total; when the total reaches the threshold,
// run `epochs` Adam steps on the PPO clipped objective of the collected batch and start a new one.
// After every pass the policy's own placements are scored; the best-scoring parameters are kept.
#include <cmath>

#include "mapper/placers.h"
#include "mapper/rl_placer.h"
#include "mapper/rng.h"

namespace tessera::mapper {
namespace {

class Adam {
 public:
  explicit Adam(int n, double lr) : m_lr(lr), m_m(Eigen::VectorXd::Zero(n)), m_v(Eigen::VectorXd::Zero(n)) {}
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

int sample_index(const Eigen::VectorXd& logp, Rng& rng) {
  double u = rng.uniform(), acc = 0.0;
  for (int j = 0; j < logp.size(); ++j) {
    acc += std::exp(logp[j]);
    if (u < acc) return j;
  }
  return static_cast<int>(logp.size()) - 1;
}

}  // namespace

Policy train_policy(const std::vector<CoreProblem>& graphs, const TrainOptions& opt,
                    const std::function<void(int, double)>& progress) {
  Policy policy(opt.hidden, 1.0, opt.sigma_steps);
  policy.init(opt.seed);
  Rng rng(opt.seed ^ 0x5EEDULL);
  std::vector<PolicyInput> inputs;
  std::vector<std::vector<int>> cores;
  std::vector<std::vector<double>> prio;
  std::vector<double> ref;
  for (const CoreProblem& pb : graphs) {
    inputs.push_back(make_policy_input(pb));
    cores.push_back(position_cores(pb));
    prio.push_back(node_priority(pb));
    ref.push_back(std::max(1e-9, std::fabs(core_reward(pb, place_hilbert(pb), opt.routing))));
  }
  // Mean normalised reward of the policy's own (most probable) placements over the training graphs;
  // the best parameters seen, the initial ones included, are returned.
  auto evaluate = [&] {
    double s = 0.0;
    for (size_t gi = 0; gi < graphs.size(); ++gi) s += core_reward(graphs[gi], place_rl(graphs[gi], policy), opt.routing) / ref[gi];
    return s / static_cast<double>(graphs.size());
  };
  double best_score = evaluate();
  Eigen::VectorXd best = policy.params();
  if (progress) progress(-1, best_score);
  Adam adam(policy.num_params(), opt.lr);
  std::vector<PpoItem> batch;
  double total = 0.0;
  for (int it = 0; it < opt.iterations; ++it) {
    for (size_t gi = 0; gi < graphs.size(); ++gi) {
      const CoreProblem& pb = graphs[gi];
      const int m = static_cast<int>(cores[gi].size());
      Eigen::VectorXd mu = policy.forward(inputs[gi]);
      // `samples` placements of this graph; their mean reward is the baseline of the advantage.
      std::vector<PpoItem> group;
      double mean = 0.0;
      for (int k = 0; k < opt.samples; ++k) {
        PpoItem item{&inputs[gi], {}, {}, 0.0, m};
        std::vector<int> desired(pb.n());
        for (int v = 0; v < pb.n(); ++v) {
          Eigen::VectorXd lp = position_log_probs(mu[v], m, policy.bound(), policy.sigma_steps());
          int j = sample_index(lp, rng);
          item.actions.push_back(j);
          item.old_logp.push_back(lp[j]);
          desired[v] = cores[gi][j];
        }
        item.advantage = core_reward(pb, resolve_conflicts(pb, desired, prio[gi]), opt.routing) / ref[gi];
        mean += item.advantage / opt.samples;
        total += std::fabs(item.advantage);
        group.push_back(std::move(item));
      }
      for (PpoItem& item : group) {
        item.advantage -= mean;
        batch.push_back(std::move(item));
      }
      if (total < opt.threshold) continue;
      double var = 0.0;
      for (const PpoItem& b : batch) var += b.advantage * b.advantage / batch.size();
      for (PpoItem& b : batch) b.advantage /= std::sqrt(var) + 1e-8;
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
  }
  policy.set_params(best);
  return policy;
}

}  // namespace tessera::mapper
