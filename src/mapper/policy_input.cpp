// make_policy_input: the normalised adjacency and the input columns of the policy (policy.h).
#include <algorithm>
#include <cmath>
#include <vector>

#include "mapper/features.h"
#include "mapper/policy.h"

namespace tessera::mapper {
namespace {

// Longest-path depth from the sources (edges go src -> dst; generators emit DAGs; a cyclic input
// falls back to BFS order for the nodes on cycles), scaled to [0, 1].
std::vector<double> depth(const CoreProblem& pb) {
  const int n = pb.n();
  std::vector<int> indeg(n, 0), d(n, 0);
  std::vector<std::vector<int>> out(n);
  for (const Edge& e : pb.edges) {
    out[e.src].push_back(e.dst);
    ++indeg[e.dst];
  }
  std::vector<int> queue;
  for (int v = 0; v < n; ++v)
    if (indeg[v] == 0) queue.push_back(v);
  for (size_t i = 0; i < queue.size(); ++i)
    for (int w : out[queue[i]]) {
      d[w] = std::max(d[w], d[queue[i]] + 1);
      if (--indeg[w] == 0) queue.push_back(w);
    }
  int dmax = std::max(1, *std::max_element(d.begin(), d.end()));
  std::vector<double> r(n);
  for (int v = 0; v < n; ++v) r[v] = static_cast<double>(d[v]) / dmax;
  return r;
}

// Fiedler-like coordinate: power iteration on (I + A) with the degree-weighted constant vector
// projected out, 60 steps from a fixed start; min-max normalised.
std::vector<double> spectral(const Eigen::SparseMatrix<double>& a,
                             const Eigen::VectorXd& sqrt_deg) {
  const int n = static_cast<int>(a.rows());
  Eigen::VectorXd u = sqrt_deg.normalized();
  Eigen::VectorXd v(n);
  for (int i = 0; i < n; ++i) v[i] = std::cos(1.0 + 2.399963 * i);
  for (int it = 0; it < 60; ++it) {
    v -= u * u.dot(v);
    v = v + a * v;
    double nv = v.norm();
    if (nv == 0.0) break;
    v /= nv;
  }
  std::vector<double> r(v.data(), v.data() + n);
  double lo = *std::min_element(r.begin(), r.end()), hi = *std::max_element(r.begin(), r.end());
  for (double& x : r) x = hi > lo ? (x - lo) / (hi - lo) : 0.0;
  return r;
}

}  // namespace

PolicyInput make_policy_input(const CoreProblem& pb) {
  const int n = pb.n();
  PolicyInput in;
  double wmax = 0.0;
  for (const auto& a : pb.adj)
    for (const Neighbor& nb : a) wmax = std::max(wmax, nb.weight);
  if (wmax == 0.0) wmax = 1.0;
  Eigen::VectorXd deg = Eigen::VectorXd::Ones(n);
  for (int v = 0; v < n; ++v)
    for (const Neighbor& nb : pb.adj[v]) deg[v] += nb.weight / wmax;
  Eigen::VectorXd isq = deg.cwiseSqrt().cwiseInverse();
  std::vector<Eigen::Triplet<double>> t;
  for (int v = 0; v < n; ++v) {
    t.emplace_back(v, v, isq[v] * isq[v]);
    for (const Neighbor& nb : pb.adj[v])
      t.emplace_back(v, nb.node, nb.weight / wmax * isq[v] * isq[nb.node]);
  }
  in.adj.resize(n, n);
  in.adj.setFromTriplets(t.begin(), t.end());
  // Features from a graph of the problem's local nodes and edges.
  LogicalGraph g;
  for (int v = 0; v < n; ++v) g.add_node({std::to_string(v), pb.multicast[v] != 0});
  for (const Edge& e : pb.edges) g.add_edge(e.src, e.dst, e.weight);
  auto f = node_features(g);
  auto dep = depth(pb);
  auto spec = n > 1 ? spectral(in.adj, deg.cwiseSqrt()) : std::vector<double>(n, 0.5);
  in.x.resize(n, kPolicyInputs);
  for (int v = 0; v < n; ++v) {
    for (int k = 0; k < kNumFeatures; ++k) in.x(v, k) = f[v][k];
    in.x(v, 7) = dep[v];
    in.x(v, 8) = spec[v];
  }
  return in;
}

}  // namespace tessera::mapper
