#include "mapper/partition_refine.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <utility>

#include "common/error.h"
#include "mapper/core_problem.h"
#include "mapper/placers.h"

namespace tessera::mapper {
namespace {

struct Candidate {
  double gain;
  int node;
  // Max-heap order: larger gain first, then lower node id.
  bool operator<(const Candidate& o) const {
    return gain != o.gain ? gain < o.gain : node > o.node;
  }
};

struct Move {
  int node, from, to;
};

class FmRefiner {
 public:
  FmRefiner(const LogicalGraph& g, const SystemSpec& sys, const std::vector<int>& free_cores,
            std::vector<int>& proc)
      : m_adj(g.undirected()),
        m_parts(sys.processors),
        m_cap(free_cores),
        m_proc(proc),
        m_hops(static_cast<size_t>(m_parts) * m_parts),
        m_all_to_all(sys.interconnect == Interconnect::kAllToAll) {
    for (int p = 0; p < m_parts; ++p)
      for (int q = 0; q < m_parts; ++q) m_hops[p * m_parts + q] = sys.processor_hops(p, q);
  }

  // One FM pass; returns the objective decrease it kept (>= 0).
  double pass(int stall) {
    rebuild();
    const int n = static_cast<int>(m_proc.size());
    std::vector<char> locked(n, 0);
    std::priority_queue<Candidate> heap;
    for (int v = 0; v < n; ++v)
      if (on_boundary(v)) push_best(heap, v);
    std::vector<Move> log;
    double cum = 0.0, best = 0.0;
    size_t best_len = 0;
    const double eps = 1e-9 * std::max(1.0, m_total);
    while (!heap.empty() && static_cast<int>(log.size() - best_len) < stall) {
      Candidate c = heap.top();
      heap.pop();
      if (locked[c.node]) continue;
      auto [gain, to] = best_move(c.node);
      if (to < 0) continue;
      if (gain < c.gain) {  // stale: a target filled up since the entry was pushed
        heap.push({gain, c.node});
        continue;
      }
      log.push_back({c.node, m_proc[c.node], to});
      move(c.node, to);
      locked[c.node] = 1;
      cum += gain;
      if (cum > best + eps) best = cum, best_len = log.size();
      for (const Neighbor& nb : m_adj[c.node])
        if (!locked[nb.node]) push_best(heap, nb.node);
    }
    for (size_t i = log.size(); i > best_len; --i) move(log[i - 1].node, log[i - 1].from);
    m_kept += static_cast<int>(best_len);
    return best;
  }

  int kept() const { return m_kept; }

 private:
  void rebuild() {
    const int n = static_cast<int>(m_proc.size());
    m_conn.assign(static_cast<size_t>(n) * m_parts, 0.0);
    m_load.assign(m_parts, 0);
    m_total = 0.0;
    for (int v = 0; v < n; ++v) {
      ++m_load[m_proc[v]];
      for (const Neighbor& nb : m_adj[v]) {
        m_conn[static_cast<size_t>(v) * m_parts + m_proc[nb.node]] += nb.weight;
        m_total += nb.weight;
      }
    }
  }

  bool on_boundary(int v) const {
    for (const Neighbor& nb : m_adj[v])
      if (m_proc[nb.node] != m_proc[v]) return true;
    return false;
  }

  // Traffic x hops of v's edges if v sat on processor p.
  double cost_at(int v, int p) const {
    const double* conn = &m_conn[static_cast<size_t>(v) * m_parts];
    const int* hops = &m_hops[static_cast<size_t>(p) * m_parts];
    double c = 0.0;
    for (int q = 0; q < m_parts; ++q) c += conn[q] * hops[q];
    return c;
  }

  // (gain, target) of v's best move to a processor with room; target -1 if none has room.
  std::pair<double, int> best_move(int v) const {
    const int p = m_proc[v];
    const double* conn = &m_conn[static_cast<size_t>(v) * m_parts];
    const double here = m_all_to_all ? 0.0 : cost_at(v, p);
    double best_gain = 0.0;
    int best = -1;
    for (int q = 0; q < m_parts; ++q) {
      if (q == p || m_load[q] >= m_cap[q]) continue;
      // All-to-all: every other processor is one hop away, so the gain is the weight gained on q
      // minus the weight left on p.
      double gain = m_all_to_all ? conn[q] - conn[p] : here - cost_at(v, q);
      if (best < 0 || gain > best_gain) best = q, best_gain = gain;
    }
    return {best_gain, best};
  }

  void push_best(std::priority_queue<Candidate>& heap, int v) const {
    auto [gain, to] = best_move(v);
    if (to >= 0) heap.push({gain, v});
  }

  void move(int v, int to) {
    const int from = m_proc[v];
    for (const Neighbor& nb : m_adj[v]) {
      m_conn[static_cast<size_t>(nb.node) * m_parts + from] -= nb.weight;
      m_conn[static_cast<size_t>(nb.node) * m_parts + to] += nb.weight;
    }
    --m_load[from];
    ++m_load[to];
    m_proc[v] = to;
  }

  std::vector<std::vector<Neighbor>> m_adj;
  int m_parts;
  std::vector<int> m_cap;
  std::vector<int>& m_proc;
  std::vector<int> m_hops;
  bool m_all_to_all;
  std::vector<double> m_conn;  // [node * parts + processor]: weight from node to that processor
  std::vector<int> m_load;
  double m_total = 0.0;
  int m_kept = 0;
};

}  // namespace

double inter_processor_cost(const LogicalGraph& g, const SystemSpec& sys,
                            const std::vector<int>& proc) {
  double c = 0.0;
  for (const Edge& e : g.edges())
    c += std::fabs(e.weight) * sys.processor_hops(proc[e.src], proc[e.dst]);
  return c;
}

double placed_cost_estimate(const LogicalGraph& g, const SystemSpec& sys,
                            const std::vector<int>& proc) {
  double cost = inter_processor_cost(g, sys, proc) * sys.link_bandwidth / sys.inter_link_bandwidth;
  for (int p = 0; p < sys.processors; ++p) {
    CoreProblem pb = make_core_problem(g, sys, proc, p);
    if (pb.n() > 0) cost += core_cost(pb, place_greedy(pb));
  }
  return cost;
}

RefineStats refine_partition(const LogicalGraph& g, const SystemSpec& sys,
                             const std::vector<int>& free_cores, std::vector<int>& proc,
                             int max_passes) {
  TESSERA_CHECK(static_cast<int>(proc.size()) == g.num_nodes(), "one processor per node");
  TESSERA_CHECK(static_cast<int>(free_cores.size()) == sys.processors, "free cores per processor");
  std::vector<int> load(sys.processors, 0);
  for (int p : proc) ++load[p];
  for (int p = 0; p < sys.processors; ++p)
    TESSERA_CHECK(load[p] <= free_cores[p], "refine_partition needs an assignment within capacity");
  RefineStats st;
  st.before = inter_processor_cost(g, sys, proc);
  if (sys.processors > 1) {
    FmRefiner fm(g, sys, free_cores, proc);
    const int stall = std::max(50, g.num_nodes() / 10);
    while (st.passes < max_passes) {
      ++st.passes;
      if (fm.pass(stall) <= 0.0) break;
    }
    st.moves = fm.kept();
  }
  st.after = inter_processor_cost(g, sys, proc);
  return st;
}

}  // namespace tessera::mapper
