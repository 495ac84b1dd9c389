// Greedy constructive placer and its placement order (see placers.h for the contracts).
#include <algorithm>
#include <queue>
#include <tuple>

#include "mapper/placers.h"

namespace tessera::mapper {

std::vector<int> attachment_order(const CoreProblem& pb) {
  const int n = pb.n();
  std::vector<int> order;
  order.reserve(n);
  std::vector<double> attach(n, 0.0);
  std::vector<double> total(n, 0.0);
  for (int v = 0; v < n; ++v)
    for (const Neighbor& nb : pb.adj[v]) total[v] += nb.weight;
  // Max-heap on (attachment to placed nodes, total weight, -id); stale entries skipped.
  using Key = std::tuple<double, double, int>;
  std::priority_queue<Key> heap;
  std::vector<char> placed(n, 0);
  for (int v = 0; v < n; ++v) heap.push({0.0, total[v], -v});
  while (!heap.empty()) {
    auto [a, t, negv] = heap.top();
    heap.pop();
    int v = -negv;
    if (placed[v] || a != attach[v]) continue;
    order.push_back(v);
    placed[v] = 1;
    for (const Neighbor& nb : pb.adj[v])
      if (!placed[nb.node]) {
        attach[nb.node] += nb.weight;
        heap.push({attach[nb.node], total[nb.node], -nb.node});
      }
  }
  return order;
}

std::vector<int> place_greedy(const CoreProblem& pb) {
  const int n = pb.n();
  std::vector<int> pos(n, -1);
  if (n == 0) return pos;
  std::vector<char> used(pb.width * pb.height, 0);
  const int centre = (pb.height / 2) * pb.width + pb.width / 2;
  for (int v : attachment_order(pb)) {
    int best = -1;
    double best_cost = 0.0;
    int best_centre = 0;
    for (int c : pb.free) {
      if (used[c]) continue;
      double cost = 0.0;
      for (const Neighbor& nb : pb.adj[v])
        if (pos[nb.node] >= 0) cost += nb.weight * pb.dist(c, pos[nb.node]);
      int dc = pb.dist(c, centre);
      if (best < 0 || cost < best_cost || (cost == best_cost && dc < best_centre))
        best = c, best_cost = cost, best_centre = dc;
    }
    pos[v] = best;
    used[best] = 1;
  }
  return pos;
}

}  // namespace tessera::mapper
