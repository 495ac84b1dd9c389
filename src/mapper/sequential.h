// Sequential (autoregressive) placement: the nodes of a core problem are placed one at a time in
// the greedy placer's attachment order (placers.h), each decision conditioned on the nodes placed
// before it. The graph network runs once per problem (policy.h); a decision costs the head only.
//
// Node v's distribution over the positions (positions.h) that are still free:
//   log P(j) = -|z_j - mu_v|^2 / 2 sigma^2 + theta_v . phi_j  - log Z,  P(j) = 0 for taken
//   positions
// mu_v is the policy's Gaussian mean and theta_v the head's weights (Policy::head); phi_j, the
// features of candidate core c_j given what is placed (all in core steps, so they do not depend on
// the mesh size):
//   0  minus the mean Manhattan distance from c_j to v's placed neighbours, weighted by |w|
//      (0 while none is placed): attraction to where v's traffic already is;
//   1  the share of c_j's four mesh neighbours that are free and untaken, times the share of v's
//      weight that goes to nodes not yet placed: room next to v for what is still to come;
//   2  minus the Manhattan distance from c_j to the mesh centre, over the mesh's larger side.
// Taken cores are masked, so a placement never has a collision and no conflict rule is needed.
#pragma once

#include <functional>
#include <vector>

#include <Eigen/Dense>

#include "mapper/core_problem.h"
#include "mapper/positions.h"

namespace tessera::mapper {

inline constexpr int kHeadFeatures = 3;
// The head's initial bias: attraction weighs 4 per core of mean distance, the others nothing.
inline constexpr double kHeadInit[kHeadFeatures] = {4.0, 0.0, 0.0};

// Chooses the position index of `node` from its log-probabilities (-inf for taken positions).
using ChoosePosition = std::function<int(int node, const Eigen::VectorXd& lp)>;
// Sees each decision: the node, its log-probabilities, the features (positions x kHeadFeatures;
// rows of taken positions are 0) and the chosen position index.
using SeeDecision = std::function<void(int node, const Eigen::VectorXd& lp,
                                       const Eigen::MatrixXd& phi, int action)>;

// Places every node in attachment order with `choose`; returns the position index per node.
// mu: n x positions.dims(), theta: n x kHeadFeatures.
std::vector<int> decode_sequential(const CoreProblem& pb, const Positions& positions,
                                   const Eigen::MatrixXd& mu, const Eigen::MatrixXd& theta,
                                   double sigma_steps, const ChoosePosition& choose,
                                   const SeeDecision& see = {});

// The most probable position (ties: lowest index).
int most_probable(const Eigen::VectorXd& lp);

}  // namespace tessera::mapper
