#include "mapper/positions.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "mapper/placers.h"

namespace tessera::mapper {

Positions line_positions(int m, double bound) {
  Positions p;
  p.bound = bound;
  p.step = m > 1 ? 2.0 * bound / (m - 1) : 1.0;
  p.z.resize(m, 1);
  for (int j = 0; j < m; ++j) p.z(j, 0) = -bound + j * p.step;
  return p;
}

Positions make_positions(const CoreProblem& pb, int dims, double bound) {
  TESSERA_CHECK(dims == 1 || dims == 2, "policy outputs must be 1 or 2");
  if (dims == 1) {
    std::vector<int> cores = hilbert_order(pb.width, pb.height, pb.free);
    Positions p = line_positions(static_cast<int>(cores.size()), bound);
    p.cores = std::move(cores);
    return p;
  }
  Positions p;
  p.bound = bound;
  p.cores = pb.free;
  const int side = std::max(pb.width, pb.height);
  p.step = side > 1 ? 2.0 * bound / (side - 1) : 1.0;
  p.z.resize(static_cast<int>(p.cores.size()), 2);
  for (int j = 0; j < p.size(); ++j) {
    p.z(j, 0) = -bound + (p.cores[j] % pb.width) * p.step;
    p.z(j, 1) = -bound + (p.cores[j] / pb.width) * p.step;
  }
  return p;
}

Eigen::VectorXd position_log_probs(const Positions& p, const Eigen::RowVectorXd& mu,
                                   double sigma_steps) {
  const int m = p.size();
  Eigen::VectorXd lp(m);
  if (m == 1) {
    lp[0] = 0.0;
    return lp;
  }
  const double sigma = position_sigma(p, sigma_steps);
  for (int j = 0; j < m; ++j) {
    double s = 0.0;
    for (int k = 0; k < p.dims(); ++k) {
      double d = (p.z(j, k) - mu[k]) / sigma;
      s += d * d;
    }
    lp[j] = -0.5 * s;
  }
  double mx = lp.maxCoeff();
  double lse = mx + std::log((lp.array() - mx).exp().sum());
  return lp.array() - lse;
}

Eigen::RowVectorXd position_offset(const Positions& p, const Eigen::VectorXd& lp, int a) {
  Eigen::RowVectorXd g(p.dims());
  for (int k = 0; k < p.dims(); ++k) {
    double ez = 0.0;
    for (int j = 0; j < p.size(); ++j) ez += std::exp(lp[j]) * p.z(j, k);
    g[k] = p.z(a, k) - ez;
  }
  return g;
}

int most_probable_position(const Positions& p, const Eigen::RowVectorXd& mu) {
  const int m = p.size();
  if (p.dims() == 1)
    return std::clamp(static_cast<int>(std::lround((mu[0] + p.bound) / p.step)), 0, m - 1);
  int best = 0;
  double best_d = INFINITY;
  for (int j = 0; j < m; ++j) {
    double d = (p.z.row(j) - mu).squaredNorm();
    if (d < best_d) {
      best_d = d;
      best = j;
    }
  }
  return best;
}

}  // namespace tessera::mapper
