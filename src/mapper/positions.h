// The policy's action space: the positions a node may be placed at, their coordinates in the
// policy's output space, and the discretised Gaussian over them.
//
// Position j is free core cores[j] with coordinates z_j (a row of z), each coordinate in
// [-bound, bound]. A node whose policy output is mu (a row, one value per dimension) chooses
// position j with probability proportional to exp(-|z_j - mu|^2 / 2 sigma^2), sigma = sigma_steps *
// step: the Gaussian of the policy discretised over the positions.
//   1-D (line): the m free cores in Hilbert order (nearby positions are nearby cores), z_j = -bound
//               + j * step, step = 2 * bound / (m - 1).
//   2-D (mesh): the free cores in id order at their mesh coordinates, z_j = (-bound + x * step,
//               -bound + y * step), step = 2 * bound / (max(width, height) - 1): the mesh scaled
//               into the square [-bound, bound]^2, one step per core in both directions.
#pragma once

#include <vector>

#include <Eigen/Dense>

#include "mapper/core_problem.h"

namespace tessera::mapper {

struct Positions {
  std::vector<int> cores;  // position -> local core (empty for a bare line)
  Eigen::MatrixXd z;       // m x dims coordinates
  double step = 1.0;       // one position (core) step in z units
  double bound = 1.0;

  int size() const { return static_cast<int>(z.rows()); }
  int dims() const { return static_cast<int>(z.cols()); }
};

// m positions on a line (no cores attached): the 1-D space of a problem with m free cores.
Positions line_positions(int m, double bound);
// The positions of a problem's free cores, dims 1 (Hilbert line) or 2 (mesh).
Positions make_positions(const CoreProblem& pb, int dims, double bound);

// log P(position j | mu) for every j (mu: one value per dimension).
Eigen::VectorXd position_log_probs(const Positions& p, const Eigen::RowVectorXd& mu,
                                   double sigma_steps);
// z_a - E[z] under the log probabilities lp: d log P(position a | mu) / d mu times sigma^2.
Eigen::RowVectorXd position_offset(const Positions& p, const Eigen::VectorXd& lp, int a);
// sigma of the Gaussian in z units.
inline double position_sigma(const Positions& p, double sigma_steps) {
  return sigma_steps * p.step;
}
// The most probable position for mu: on a line round((mu + bound) / step) clamped to the ends; in
// 2-D the position nearest to mu (ties: lowest position).
int most_probable_position(const Positions& p, const Eigen::RowVectorXd& mu);

}  // namespace tessera::mapper
