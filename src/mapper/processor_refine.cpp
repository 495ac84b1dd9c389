// refine_processor_cut: a greedy boundary refinement of a processor assignment (communities.h).
//
// The cost of node v on processor q is sum over its neighbours u of |w(v,u)| + |w(u,v)| times the
// processor hops from q to proc[u] (0 on the same processor, 1 all-to-all, Manhattan on a processor
// mesh). A pass visits the nodes in id order and moves each to the processor of least cost among
// those with a spare free core, if that lowers its cost by more than 1e-12 of its total weight. Passes
// repeat until one moves nothing or `max_passes` is reached. Every move lowers the total
// inter-processor cost, so the loop terminates; capacities are never exceeded.
#include <algorithm>

#include "mapper/communities.h"

namespace tessera::mapper {

int refine_processor_cut(const LogicalGraph& g, const SystemSpec& sys, std::vector<int>& proc, int max_passes) {
  const int k = sys.processors;
  if (k < 2) return 0;
  auto adj = g.undirected();
  std::vector<int> load(k, 0), room(k);
  for (int p : proc) ++load[p];
  for (int p = 0; p < k; ++p) room[p] = sys.free_cores(p) - load[p];
  std::vector<double> to(k);
  int moved_total = 0;
  for (int pass = 0; pass < max_passes; ++pass) {
    int moved = 0;
    for (int v = 0; v < g.num_nodes(); ++v) {
      std::fill(to.begin(), to.end(), 0.0);
      double weight = 0.0;
      for (const Neighbor& nb : adj[v]) {
        to[proc[nb.node]] += nb.weight;
        weight += nb.weight;
      }
      auto cost = [&](int q) {
        double c = 0.0;
        for (int r = 0; r < k; ++r)
          if (to[r] != 0.0) c += to[r] * sys.processor_hops(q, r);
        return c;
      };
      const int own = proc[v];
      double best_cost = cost(own);
      int best = own;
      for (int q = 0; q < k; ++q) {
        if (q == own || room[q] <= 0 || to[q] == 0.0) continue;
        double c = cost(q);
        if (c < best_cost - 1e-12 * weight) best_cost = c, best = q;
      }
      if (best == own) continue;
      proc[v] = best;
      ++room[own];
      --room[best];
      ++moved;
    }
    moved_total += moved;
    if (moved == 0) break;
  }
  return moved_total;
}

}  // namespace tessera::mapper
