// One-step placement with the learned policy (docs/mapper.md, "Step 2"), and its training (PPO).
//
// Inference: every node's Gaussian mean mu_i (one value along the Hilbert order of the free cores,
// or x and y on the mesh: positions.h) is mapped to its most probable position; all nodes are
// placed at once and collisions are settled by resolve_conflicts. Training samples positions from
// the discretised Gaussians instead. A sequential policy (sequential.h) instead places the nodes
// one at a time, each at its most probable untaken position (sampled in training): no conflicts.
//
// Conflict rule (spec): per core, of the nodes whose choice it is, the one with the highest
// priority keeps it (priority = interaction weight, sum of |w| of in- and out-edges; ties: lower
// id); the others then, in priority order, take the free core nearest (Manhattan; ties: lowest core
// id) to the core they chose.
//
// PPO: each node's choice is one decision (factorised policy, or for a sequential one the node's
// decision given the nodes placed before it in the sampled placement; ratios are per node, not the
// product over nodes):
//   L = mean over decisions of min(r A, clip(r, 1 - eps, 1 + eps) A),  r = exp(logp_new - logp_old)
// Several placements are sampled per graph visit (a group). Advantage of a decision, by `credit`:
//   placement: the spec's reward (metrics.h) of the whole placement, divided by |reward of the
//              Hilbert-order placement|, minus the group's mean - every node of a placement gets
//              the same advantage (one scalar for hundreds of decisions: very noisy);
//   node:      the node's own share of the interaction cost, -(sum of w * distance over its edges)
//              in the final placement (after the conflict rule), minus that node's mean over the
//              group, divided by the node's mean cost in the Hilbert-order placement. The sum of
//              the shares is twice the placement's interaction cost, and a node's choice changes
//              its own share directly, so this is the spec's objective with per-decision credit.
// Either way the advantages are then scaled to unit root-mean-square over the batch. The reward of
// a placement is the spec's (TrainReward::kSpec) or minus its interaction cost (kCost, the sum of
// w * distance that every benchmark compares), each divided by the Hilbert-order placement's.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mapper/core_problem.h"
#include "mapper/policy.h"
#include "mapper/positions.h"
#include "mapper/routing.h"

namespace tessera::mapper {

std::vector<int> resolve_conflicts(const CoreProblem& pb, const std::vector<int>& desired,
                                   const std::vector<double>& priority);
std::vector<double> node_priority(const CoreProblem& pb);
std::vector<int> place_rl(const CoreProblem& pb, const Policy& policy);
// The same with the policy's input and positions built once (training evaluates repeatedly).
std::vector<int> place_rl(const CoreProblem& pb, const Policy& policy, const PolicyInput& in,
                          const Positions& positions, const std::vector<double>& priority);

// Spec reward of a core placement on the problem's mesh (turn-model routes; dl_ratio = 0).
double core_reward(const CoreProblem& pb, const std::vector<int>& pos, TurnModel model);

struct PpoItem {
  const PolicyInput* input = nullptr;
  std::vector<int> actions{};      // position per node
  std::vector<double> old_logp{};  // log P_old(action) per node
  double advantage = 0.0;
  const Positions* positions = nullptr;
  std::vector<double> node_advantage{};  // per decision; empty: every decision has `advantage`
  const CoreProblem* problem =
      nullptr;  // sequential policies: the problem, to replay the decisions
};

// Per node, sum of w * Manhattan distance over its edges (each edge counts at both ends).
std::vector<double> node_costs(const CoreProblem& pb, const std::vector<int>& pos);

// The clipped objective (to maximise) averaged over all decisions of the batch; if grad is given,
// fills dL/dparams.
double ppo_objective(const Policy& policy, const std::vector<PpoItem>& batch, double eps,
                     Eigen::VectorXd* grad);

enum class TrainReward { kSpec, kCost };

struct TrainOptions {
  int iterations = 200;      // passes over the training graphs
  double threshold = 8.0;    // update once the summed |normalised reward| reaches this
  int samples = 16;          // placements sampled per graph visit (group baseline)
  int epochs = 8;            // PPO epochs per update
  double lr = 3e-3;          // Adam
  bool node_credit = false;  // advantage per node (true) or per placement (false), see above
  double eps = 0.2;          // PPO clip
  uint64_t seed = 1;
  TurnModel routing = TurnModel::kXY;
  int hidden = 24;
  int outputs = 1;             // policy outputs: 1 (Hilbert line) or 2 (x, y on the mesh)
  int inputs = kPolicyInputs;  // or kPolicyInputsMesh (adds a second spectral coordinate)
  bool layout_skip = false;    // learn an offset from the spectral layout (policy.h)
  bool sequential = false;     // place the nodes one at a time (sequential.h)
  TrainReward reward = TrainReward::kSpec;
  // Curriculum: the passes visit the graphs in increasing size, the largest joining over the first
  // half of the passes (pass t visits the smallest max(1, ceil(G * 2 (t + 1) / passes)) of G).
  bool curriculum = false;
  double sigma_steps = 1.0;  // Gaussian width in position steps at the end of training
  double sigma_start = 4.0;  // ... and at the start (geometric schedule over the iterations)
};

// Scores a policy on graphs it is not trained on: the geometric mean over the problems of the
// interaction cost of its own placement divided by the greedy placement's (placers.h).
class HeldOut {
 public:
  explicit HeldOut(std::vector<CoreProblem> problems);
  double score(const Policy& policy) const;
  bool empty() const { return m_problems.empty(); }

 private:
  std::vector<CoreProblem> m_problems;
  std::vector<PolicyInput> m_inputs;
  std::vector<std::vector<double>> m_priority;
  std::vector<double> m_greedy;
};

// Trains from a fresh policy (deterministic from opt.seed) and returns the parameters whose own
// placements scored best over the training graphs (mean reward / |Hilbert reward|), the initial
// ones included. `progress(iteration, that score)` is called before training (iteration -1) and
// after each pass; with a held-out set, `held_out_progress(iteration, its score)` too.
Policy train_policy(const std::vector<CoreProblem>& graphs, const TrainOptions& opt,
                    const std::function<void(int, double)>& progress = {},
                    const HeldOut* held_out = nullptr,
                    const std::function<void(int, double)>& held_out_progress = {});

}  // namespace tessera::mapper
