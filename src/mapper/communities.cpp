#include "mapper/communities.h"

#include <igraph.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <numeric>

#include "common/error.h"
#include "mapper/partition_refine.h"

namespace tessera::mapper {
namespace {

std::vector<int> dense_labels(const std::vector<int>& labels) {
  std::map<int, int> remap;
  std::vector<int> out(labels.size());
  for (size_t i = 0; i < labels.size(); ++i) {
    auto [it, fresh] = remap.try_emplace(labels[i], static_cast<int>(remap.size()));
    out[i] = it->second;
  }
  return out;
}

// Splits community c in two halves along a BFS order (restricted to c) from a peripheral node: the
// node reached last by a BFS from c's lowest id. The second half gets label `fresh`.
void bisect(const std::vector<std::vector<Neighbor>>& adj, std::vector<int>& labels, int c,
            int fresh) {
  std::vector<int> members;
  for (size_t v = 0; v < labels.size(); ++v)
    if (labels[v] == c) members.push_back(static_cast<int>(v));
  // BFS restricted to c from `root`, continuing from unvisited members in id order if c is split.
  auto bfs = [&](int root) {
    std::vector<int> order;
    std::vector<char> seen(labels.size(), 0);
    for (size_t m = 0; order.size() < members.size(); ++m) {
      int r = m == 0 ? root : members[m - 1];
      if (seen[r]) continue;
      std::deque<int> q{r};
      seen[r] = 1;
      while (!q.empty()) {
        int v = q.front();
        q.pop_front();
        order.push_back(v);
        for (const Neighbor& nb : adj[v])
          if (!seen[nb.node] && labels[nb.node] == c) {
            seen[nb.node] = 1;
            q.push_back(nb.node);
          }
      }
    }
    return order;
  };
  std::vector<int> order = bfs(bfs(members.front()).back());
  for (size_t i = order.size() / 2; i < order.size(); ++i) labels[order[i]] = fresh;
}

std::vector<int> sizes_of(const std::vector<int>& labels, int k) {
  std::vector<int> s(k, 0);
  for (int l : labels) ++s[l];
  return s;
}

}  // namespace

std::vector<int> louvain(const LogicalGraph& g, double resolution, uint64_t seed) {
  if (g.num_nodes() == 0) return {};
  auto adj = g.undirected();
  igraph_vector_int_t edges;
  igraph_vector_t weights;
  igraph_vector_int_init(&edges, 0);
  igraph_vector_init(&weights, 0);
  for (int v = 0; v < g.num_nodes(); ++v)
    for (const Neighbor& nb : adj[v])
      if (v < nb.node) {
        igraph_vector_int_push_back(&edges, v);
        igraph_vector_int_push_back(&edges, nb.node);
        igraph_vector_push_back(&weights, nb.weight);
      }
  // igraph's default handler aborts; report its errors as return codes instead.
  igraph_set_error_handler(igraph_error_handler_ignore);
  igraph_t graph;
  if (igraph_create(&graph, &edges, g.num_nodes(), IGRAPH_UNDIRECTED) != IGRAPH_SUCCESS) {
    igraph_vector_destroy(&weights);
    igraph_vector_int_destroy(&edges);
    throw Error("louvain", "igraph_create failed");
  }
  igraph_rng_seed(igraph_rng_default(), static_cast<igraph_uint_t>(seed));
  igraph_vector_int_t membership;
  igraph_vector_int_init(&membership, 0);
  igraph_error_t rc =
      igraph_community_multilevel(&graph, &weights, resolution, &membership, nullptr, nullptr);
  std::vector<int> labels(g.num_nodes(), 0);
  if (rc == IGRAPH_SUCCESS)
    for (int v = 0; v < g.num_nodes(); ++v) labels[v] = static_cast<int>(VECTOR(membership)[v]);
  igraph_vector_int_destroy(&membership);
  igraph_destroy(&graph);
  igraph_vector_destroy(&weights);
  igraph_vector_int_destroy(&edges);
  if (rc != IGRAPH_SUCCESS)
    throw Error("louvain",
                fmt::format("igraph_community_multilevel failed ({})", static_cast<int>(rc)));
  return dense_labels(labels);
}

std::vector<int> merge_split(const LogicalGraph& g, std::vector<int> labels, int k, int cap_max) {
  TESSERA_CHECK(k >= 1, "k must be >= 1");
  const int n = g.num_nodes();
  auto adj = g.undirected();
  labels = dense_labels(labels);
  int count = labels.empty() ? 0 : *std::max_element(labels.begin(), labels.end()) + 1;
  // Split: oversize communities, then the largest while there are too few.
  for (;;) {
    std::vector<int> s = sizes_of(labels, count);
    int big = s.empty() ? -1 : static_cast<int>(std::max_element(s.begin(), s.end()) - s.begin());
    if (big < 0 || s[big] < 2) break;
    if (s[big] > cap_max || count < std::min(k, n)) {
      bisect(adj, labels, big, count++);
      continue;
    }
    break;
  }
  // Merge: smallest into its best-connected neighbour that it fits with.
  while (count > k) {
    std::vector<int> s = sizes_of(labels, count);
    int small = static_cast<int>(std::min_element(s.begin(), s.end()) - s.begin());
    std::vector<double> link(count, 0.0);
    for (int v = 0; v < n; ++v)
      if (labels[v] == small)
        for (const Neighbor& nb : adj[v]) link[labels[nb.node]] += nb.weight;
    int best = -1;
    for (int c = 0; c < count; ++c) {
      if (c == small || s[c] + s[small] > cap_max) continue;
      if (best < 0 || link[c] > link[best] || (link[c] == link[best] && s[c] < s[best])) best = c;
    }
    if (best < 0) {
      // No community can absorb it whole: hand its nodes one by one to the community with room
      // they are most connected to (room exists: n <= k * cap_max < count * cap_max).
      for (int v = 0; v < n; ++v) {
        if (labels[v] != small) continue;
        std::vector<double> to(count, 0.0);
        for (const Neighbor& nb : adj[v]) to[labels[nb.node]] += nb.weight;
        int dest = -1;
        for (int c = 0; c < count; ++c)
          if (c != small && s[c] < cap_max && (dest < 0 || to[c] > to[dest])) dest = c;
        if (dest < 0)
          for (int c = 0; c < count; ++c)
            if (c != small && (dest < 0 || s[c] < s[dest])) dest = c;
        labels[v] = dest;
        ++s[dest];
      }
      best = small;  // now empty
    }
    for (int& l : labels) l = l == small ? best : l;
    for (int& l : labels) l = l == count - 1 ? small : l;  // keep labels dense
    --count;
  }
  return labels;
}

std::vector<CommunityInfo> community_info(const LogicalGraph& g, const std::vector<int>& labels,
                                          int k) {
  std::vector<CommunityInfo> info(k);
  std::vector<std::vector<char>> neighbour(k, std::vector<char>(k, 0));
  for (int l : labels) ++info[l].nodes;
  for (const Edge& e : g.edges()) {
    int a = labels[e.src], b = labels[e.dst];
    if (a == b) continue;
    info[a].connection_weight += std::fabs(e.weight);
    info[b].connection_weight += std::fabs(e.weight);
    neighbour[a][b] = neighbour[b][a] = 1;
  }
  for (int a = 0; a < k; ++a)
    for (int b = 0; b < k; ++b)
      if (neighbour[a][b]) info[a].neighbour_nodes += info[b].nodes;
  return info;
}

std::vector<int> assign_communities(const std::vector<CommunityInfo>& info,
                                    const std::vector<int>& free_cores) {
  const int k = static_cast<int>(info.size());
  std::vector<int> order(k);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (info[a].connection_weight != info[b].connection_weight)
      return info[a].connection_weight > info[b].connection_weight;
    return info[a].nodes > info[b].nodes;
  });
  std::vector<int> proc(k, -1);
  std::vector<char> taken(k, 0);
  for (size_t p = 0; p < free_cores.size(); ++p)
    for (int c : order)
      if (!taken[c] && info[c].nodes <= free_cores[p]) {
        proc[c] = static_cast<int>(p);
        taken[c] = 1;
        break;
      }
  return proc;
}

void repair_capacity(const LogicalGraph& g, const std::vector<int>& free_cores,
                     std::vector<int>& proc) {
  const int P = static_cast<int>(free_cores.size());
  long total = std::accumulate(free_cores.begin(), free_cores.end(), 0L);
  if (total < g.num_nodes())
    throw Error("system",
                fmt::format("the graph has {} nodes but the system has only {} free cores",
                            g.num_nodes(), total));
  auto adj = g.undirected();
  std::vector<int> load(P, 0);
  for (int p : proc) ++load[p];
  for (int p = 0; p < P; ++p) {
    while (load[p] > free_cores[p]) {
      // The node of p least attached to p, moved to the spare processor it is most attached to.
      int worst = -1;
      double worst_in = 0.0;
      for (int v = 0; v < g.num_nodes(); ++v) {
        if (proc[v] != p) continue;
        double in = 0.0;
        for (const Neighbor& nb : adj[v]) in += proc[nb.node] == p ? nb.weight : 0.0;
        if (worst < 0 || in < worst_in) worst = v, worst_in = in;
      }
      std::vector<double> to(P, 0.0);
      for (const Neighbor& nb : adj[worst]) to[proc[nb.node]] += nb.weight;
      int best = -1;
      for (int q = 0; q < P; ++q)
        if (load[q] < free_cores[q] && (best < 0 || to[q] > to[best])) best = q;
      proc[worst] = best;
      --load[p];
      ++load[best];
    }
  }
}

namespace {

// Louvain at one resolution, merge/split to k, priority rule, capacity repair, optional refinement.
std::vector<int> louvain_assignment(const LogicalGraph& g, const SystemSpec& sys,
                                    const std::vector<int>& free_cores, uint64_t seed,
                                    double resolution, bool refine) {
  const int k = sys.processors;
  int cap_max = *std::max_element(free_cores.begin(), free_cores.end());
  std::vector<int> labels = merge_split(g, louvain(g, resolution, seed), k, cap_max);
  std::vector<CommunityInfo> info = community_info(g, labels, k);
  std::vector<int> cproc = assign_communities(info, free_cores);
  // A community no processor could take goes where most cores are still spare; repair then moves
  // its weakest nodes elsewhere.
  std::vector<int> spare = free_cores;
  for (int c = 0; c < k; ++c)
    if (cproc[c] >= 0) spare[cproc[c]] -= info[c].nodes;
  for (int c = 0; c < k; ++c)
    if (cproc[c] < 0) {
      cproc[c] = static_cast<int>(std::max_element(spare.begin(), spare.end()) - spare.begin());
      spare[cproc[c]] -= info[c].nodes;
    }
  std::vector<int> proc(g.num_nodes());
  for (int v = 0; v < g.num_nodes(); ++v) proc[v] = cproc[labels[v]];
  repair_capacity(g, free_cores, proc);
  if (refine) refine_partition(g, sys, free_cores, proc);
  return proc;
}

}  // namespace

std::vector<int> processor_stage_louvain(const LogicalGraph& g, const SystemSpec& sys,
                                         uint64_t seed, bool refine) {
  std::vector<int> free_cores(sys.processors);
  for (int p = 0; p < sys.processors; ++p) free_cores[p] = sys.free_cores(p);
  if (sys.processors == 1) {
    std::vector<int> proc(g.num_nodes(), 0);
    repair_capacity(g, free_cores, proc);
    return proc;
  }
  std::vector<int> plain = louvain_assignment(g, sys, free_cores, seed, 1.0, false);
  if (!refine) return plain;
  std::vector<int> best;
  double best_cut = 0.0;
  for (double resolution : kLouvainResolutions) {
    if (resolution != 1.0 && g.num_nodes() > kMultiResolutionMaxNodes) continue;
    std::vector<int> proc = louvain_assignment(g, sys, free_cores, seed, resolution, true);
    double cut = inter_processor_cost(g, sys, proc);
    if (best.empty() || cut < best_cut) best = std::move(proc), best_cut = cut;
  }
  // A lower cut can still cost more once placed (the nodes it pulls in sit far from their
  // neighbours), so the refined assignment replaces the plain one only if its estimate is lower.
  return placed_cost_estimate(g, sys, best) < placed_cost_estimate(g, sys, plain) ? best : plain;
}

std::vector<int> processor_stage_sequential(const LogicalGraph& g, const SystemSpec& sys) {
  std::vector<int> proc(g.num_nodes());
  int p = 0, used = 0;
  for (int v = 0; v < g.num_nodes(); ++v) {
    while (p < sys.processors && used >= sys.free_cores(p)) ++p, used = 0;
    if (p == sys.processors)
      throw Error("system",
                  fmt::format("the graph has {} nodes but the system has only {} free cores",
                              g.num_nodes(), sys.total_free_cores()));
    proc[v] = p;
    ++used;
  }
  return proc;
}

}  // namespace tessera::mapper
