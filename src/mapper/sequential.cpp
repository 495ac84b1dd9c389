#include "mapper/sequential.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error.h"
#include "mapper/placers.h"

namespace tessera::mapper {
namespace {

// The features phi (positions x kHeadFeatures) of every untaken position for node v.
void candidate_features(const CoreProblem& pb, const Positions& positions, int v,
                        const std::vector<int>& core_of, const std::vector<char>& taken,
                        const std::vector<char>& core_used, Eigen::MatrixXd& phi) {
  phi.setZero();
  double placed_w = 0.0, total_w = 0.0;
  for (const Neighbor& nb : pb.adj[v]) {
    total_w += nb.weight;
    if (core_of[nb.node] >= 0) placed_w += nb.weight;
  }
  const double room = total_w > 0.0 ? (total_w - placed_w) / total_w : 0.0;
  const int cx = pb.width / 2, cy = pb.height / 2;
  const double side = std::max(pb.width, pb.height);
  for (int j = 0; j < positions.size(); ++j) {
    if (taken[j]) continue;
    const int c = positions.cores[j], x = c % pb.width, y = c / pb.width;
    if (placed_w > 0.0) {
      double d = 0.0;
      for (const Neighbor& nb : pb.adj[v])
        if (core_of[nb.node] >= 0) d += nb.weight * pb.dist(c, core_of[nb.node]);
      phi(j, 0) = -d / placed_w;
    }
    int open = 0;
    const int dx[4] = {1, -1, 0, 0}, dy[4] = {0, 0, 1, -1};
    for (int k = 0; k < 4; ++k) {
      const int nx = x + dx[k], ny = y + dy[k];
      if (nx >= 0 && ny >= 0 && nx < pb.width && ny < pb.height && !core_used[ny * pb.width + nx])
        ++open;
    }
    phi(j, 1) = open / 4.0 * room;
    phi(j, 2) = -(std::abs(x - cx) + std::abs(y - cy)) / side;
  }
}

}  // namespace

int most_probable(const Eigen::VectorXd& lp) {
  int best = 0;
  for (int j = 1; j < lp.size(); ++j)
    if (lp[j] > lp[best]) best = j;
  return best;
}

std::vector<int> decode_sequential(const CoreProblem& pb, const Positions& positions,
                                   const Eigen::MatrixXd& mu, const Eigen::MatrixXd& theta,
                                   double sigma_steps, const ChoosePosition& choose,
                                   const SeeDecision& see) {
  const int n = pb.n(), m = positions.size();
  TESSERA_CHECK(m >= n, "fewer free cores than logical nodes");
  TESSERA_CHECK(theta.cols() == kHeadFeatures, "sequential head width");
  std::vector<int> action(n, -1), core_of(n, -1);
  std::vector<char> taken(m, 0);
  // Cores not free for the placement: occupied ones (not in pb.free) and those taken so far.
  std::vector<char> core_used(pb.width * pb.height, 1);
  for (int c : pb.free) core_used[c] = 0;
  Eigen::MatrixXd phi(m, kHeadFeatures);
  constexpr double kNone = -std::numeric_limits<double>::infinity();
  for (int v : attachment_order(pb)) {
    candidate_features(pb, positions, v, core_of, taken, core_used, phi);
    Eigen::VectorXd lp =
        position_log_probs(positions, mu.row(v), sigma_steps) + phi * theta.row(v).transpose();
    double mx = kNone;
    for (int j = 0; j < m; ++j)
      if (taken[j])
        lp[j] = kNone;
      else
        mx = std::max(mx, lp[j]);
    double sum = 0.0;
    for (int j = 0; j < m; ++j)
      if (!taken[j]) sum += std::exp(lp[j] - mx);
    const double lse = mx + std::log(sum);
    for (int j = 0; j < m; ++j)
      if (!taken[j]) lp[j] -= lse;
    const int a = choose(v, lp);
    TESSERA_CHECK(a >= 0 && a < m && !taken[a], "sequential placement chose a taken position");
    if (see) see(v, lp, phi, a);
    action[v] = a;
    taken[a] = 1;
    core_of[v] = positions.cores[a];
    core_used[core_of[v]] = 1;
  }
  return action;
}

}  // namespace tessera::mapper
