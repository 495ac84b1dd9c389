// make_policy_input: the normalised adjacency and the input columns of the policy (policy.h).
#include <algorithm>
#include <cmath>
#include <numeric>
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

// Spectral coordinates: power iteration on (I + A) with the degree-weighted constant vector (and
// the coordinates before) projected out, 60 steps from a fixed start per coordinate; each min-max
// normalised. The first is Fiedler-like, the second approximates the next eigenvector.
std::vector<std::vector<double>> spectral(const Eigen::SparseMatrix<double>& a,
                                          const Eigen::VectorXd& sqrt_deg, int count) {
  const int n = static_cast<int>(a.rows());
  std::vector<Eigen::VectorXd> basis = {sqrt_deg.normalized()};
  std::vector<std::vector<double>> out;
  for (int c = 0; c < count; ++c) {
    Eigen::VectorXd v(n);
    for (int i = 0; i < n; ++i) v[i] = std::cos(1.0 + c + 2.399963 * i);
    for (int it = 0; it < 60; ++it) {
      for (const Eigen::VectorXd& u : basis) v -= u * u.dot(v);
      v = v + a * v;
      double nv = v.norm();
      if (nv == 0.0) break;
      v /= nv;
    }
    basis.push_back(v);
    std::vector<double> r(v.data(), v.data() + n);
    double lo = *std::min_element(r.begin(), r.end()), hi = *std::max_element(r.begin(), r.end());
    for (double& x : r) x = hi > lo ? (x - lo) / (hi - lo) : 0.0;
    out.push_back(std::move(r));
  }
  return out;
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
  auto spec = n > 1 ? spectral(in.adj, deg.cwiseSqrt(), 2)
                    : std::vector<std::vector<double>>(2, std::vector<double>(n, 0.5));
  in.x.resize(n, kPolicyInputsMesh);
  for (int v = 0; v < n; ++v) {
    for (int k = 0; k < kNumFeatures; ++k) in.x(v, k) = f[v][k];
    in.x(v, 7) = dep[v];
    in.x(v, 8) = spec[0][v];
    in.x(v, 9) = spec[1][v];
  }
  in.layout.resize(n, 2);
  for (int c = 0; c < 2; ++c) {
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return spec[c][a] < spec[c][b]; });
    for (int r = 0; r < n; ++r)
      in.layout(order[r], c) = std::atanh(0.95 * (n > 1 ? 2.0 * r / (n - 1) - 1.0 : 0.0));
  }
  return in;
}

}  // namespace tessera::mapper
