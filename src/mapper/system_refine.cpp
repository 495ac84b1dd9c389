// Whole-system refinement (see system_refine.h for the contract).
#include "mapper/system_refine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include "common/error.h"
#include "mapper/metrics.h"
#include "mapper/rng.h"

namespace tessera::mapper {
namespace {

// State with, per node, its neighbour list partitioned into those on its own processor (the first
// m_nloc[v] entries) and the others, and the weighted column / row / weight sums of the former. A
// move within a processor then costs what the per-processor annealer's does (the other neighbours'
// edges keep their cost); a move to another processor walks the whole list and repartitions the
// lists of the nodes that change processor and of their neighbours.
class SystemAnnealer {
 public:
  SystemAnnealer(const LogicalGraph& g, const SystemSpec& sys, std::vector<int> core)
      : m_sys(sys),
        m_adj(g.undirected()),
        m_pos(std::move(core)),
        m_procs(sys.processors),
        m_at(sys.total_cores(), -1),
        m_ok(sys.total_cores(), 0),
        m_free(sys.processors) {
    for (int c = 0; c < sys.total_cores(); ++c) {
      m_x.push_back(sys.x_of(c));
      m_y.push_back(sys.y_of(c));
      m_p.push_back(sys.processor_of(c));
      if (!sys.is_occupied(c)) {
        m_ok[c] = 1;
        m_free[m_p[c]].push_back(c);
      }
    }
    const double f = sys.link_bandwidth / sys.inter_link_bandwidth;
    for (int a = 0; a < m_procs; ++a)
      for (int b = 0; b < m_procs; ++b) m_inter.push_back(f * sys.processor_hops(a, b));
    for (int v = 0; v < n(); ++v) {
      TESSERA_CHECK(
          m_pos[v] >= 0 && m_pos[v] < sys.total_cores() && m_ok[m_pos[v]] && m_at[m_pos[v]] < 0,
          "refine_system: the start is not a valid placement");
      m_at[m_pos[v]] = v;
    }
    m_nloc.assign(n(), 0);
    m_sx.assign(n(), 0.0);
    m_sy.assign(n(), 0.0);
    m_sw.assign(n(), 0.0);
    for (int v = 0; v < n(); ++v) partition(v);
  }

  int n() const { return static_cast<int>(m_pos.size()); }
  int processor(int v) const { return m_p[m_pos[v]]; }
  const std::vector<int>& pos() const { return m_pos; }
  const std::vector<Neighbor>& adj(int v) const { return m_adj[v]; }
  const std::vector<int>& free_cores(int p) const { return m_free[p]; }

  double cost(int a, int b) const {
    if (m_p[a] != m_p[b]) return m_inter[m_p[a] * m_procs + m_p[b]];
    return dist(a, b);
  }

  // Cost change if v moves to core c (swapping with the node there, if any).
  double delta(int v, int c) const {
    int u = m_at[c];
    int pv = m_pos[v];
    if (m_p[c] == m_p[pv]) {  // within a processor: only the neighbours on it matter
      double d = 0.0;
      const Neighbor* a = m_adj[v].data();
      for (int i = 0; i < m_nloc[v]; ++i)
        if (a[i].node != u)
          d += a[i].weight * (dist(c, m_pos[a[i].node]) - dist(pv, m_pos[a[i].node]));
      if (u >= 0) {
        const Neighbor* b = m_adj[u].data();
        for (int i = 0; i < m_nloc[u]; ++i)
          if (b[i].node != v)
            d += b[i].weight * (dist(pv, m_pos[b[i].node]) - dist(c, m_pos[b[i].node]));
      }
      return d;
    }
    double d = 0.0;
    for (const Neighbor& nb : m_adj[v]) {
      if (nb.node == u) continue;  // the v-u edge keeps its length under a swap
      d += nb.weight * (cost(c, m_pos[nb.node]) - cost(pv, m_pos[nb.node]));
    }
    if (u >= 0)
      for (const Neighbor& nb : m_adj[u]) {
        if (nb.node == v) continue;
        d += nb.weight * (cost(pv, m_pos[nb.node]) - cost(c, m_pos[nb.node]));
      }
    return d;
  }

  void apply(int v, int c) {
    int u = m_at[c];
    int pv = m_pos[v];
    relocate(v, c);
    m_at[c] = v;
    if (u >= 0) relocate(u, pv);
    m_at[pv] = u;
  }

  // A free core of processor q in the (2r+1)^2 square around the weighted centroid of v's
  // neighbours on q, or -1.
  int window_target(int v, int q, int r, Rng& rng) const {
    double sx = 0.0, sy = 0.0, sw = 0.0;
    if (q == processor(v)) {
      sx = m_sx[v], sy = m_sy[v], sw = m_sw[v];
    } else {
      const std::vector<Neighbor>& a = m_adj[v];
      for (size_t i = m_nloc[v]; i < a.size(); ++i) {
        int c = m_pos[a[i].node];
        if (m_p[c] != q) continue;
        sx += a[i].weight * m_x[c];
        sy += a[i].weight * m_y[c];
        sw += a[i].weight;
      }
    }
    if (sw <= 1e-12) return -1;
    int x = static_cast<int>(std::lround(sx / sw)) + rng.below(2 * r + 1) - r;
    int y = static_cast<int>(std::lround(sy / sw)) + rng.below(2 * r + 1) - r;
    if (x < 0 || y < 0 || x >= m_sys.width || y >= m_sys.height) return -1;
    int c = m_sys.core_id(q, x, y);
    return m_ok[c] ? c : -1;
  }

 private:
  int dist(int a, int b) const { return std::abs(m_x[a] - m_x[b]) + std::abs(m_y[a] - m_y[b]); }

  // Puts v's neighbours on its processor first and recomputes v's sums over them.
  void partition(int v) {
    std::vector<Neighbor>& a = m_adj[v];
    const int p = processor(v);
    int k = 0;
    m_sx[v] = m_sy[v] = m_sw[v] = 0.0;
    for (size_t i = 0; i < a.size(); ++i) {
      int c = m_pos[a[i].node];
      if (m_p[c] != p) continue;
      std::swap(a[i], a[k]);
      add_sums(v, c, a[k].weight);
      ++k;
    }
    m_nloc[v] = k;
  }

  // Moves v's entry in x's list between x's own-processor part and the rest.
  void set_local(int x, int v, bool local) {
    std::vector<Neighbor>& a = m_adj[x];
    int j = 0;
    while (a[j].node != v) ++j;
    if (local)
      std::swap(a[j], a[m_nloc[x]++]);
    else
      std::swap(a[j], a[--m_nloc[x]]);
  }

  void add_sums(int x, int core, double w) {
    m_sx[x] += w * m_x[core];
    m_sy[x] += w * m_y[core];
    m_sw[x] += w;
  }

  // v goes from its core to `to` (m_at is the caller's).
  void relocate(int v, int to) {
    const int from = m_pos[v];
    const int pf = m_p[from], pt = m_p[to];
    if (pf == pt) {
      const Neighbor* a = m_adj[v].data();
      const int dx = m_x[to] - m_x[from], dy = m_y[to] - m_y[from];
      for (int i = 0; i < m_nloc[v]; ++i) {
        m_sx[a[i].node] += a[i].weight * dx;
        m_sy[a[i].node] += a[i].weight * dy;
      }
      m_pos[v] = to;
      return;
    }
    for (size_t i = 0; i < m_adj[v].size(); ++i) {
      const Neighbor nb = m_adj[v][i];
      const int px = processor(nb.node);
      if (px == pf) {
        set_local(nb.node, v, false);
        add_sums(nb.node, from, -nb.weight);
      } else if (px == pt) {
        set_local(nb.node, v, true);
        add_sums(nb.node, to, nb.weight);
      }
    }
    m_pos[v] = to;
    partition(v);
  }

  const SystemSpec& m_sys;
  std::vector<std::vector<Neighbor>> m_adj;
  std::vector<int> m_pos;
  int m_procs;
  std::vector<int> m_at;
  std::vector<char> m_ok;                // core is not occupied
  std::vector<std::vector<int>> m_free;  // per processor, its unoccupied cores
  std::vector<int> m_x, m_y, m_p;        // per core
  std::vector<double> m_inter;           // [pa * P + pb]: cost factor of an edge between processors
  std::vector<int> m_nloc;               // per node, neighbours on its own processor (list prefix)
  std::vector<double> m_sx, m_sy, m_sw;  // per node, sums over those of w x column, w x row, w
};

// Start temperature per processor (edge weights can differ by orders of magnitude between the
// processors, e.g. tile graphs): t_scale x the mean |delta| of random moves of its nodes within
// it (256 per processor on average), or t_start if >= 0.
std::vector<double> start_temperatures(const SystemAnnealer& st, int procs, const AnnealOptions& a,
                                       Rng& rng) {
  std::vector<double> t0(procs, a.t_start);
  if (a.t_start >= 0.0) return t0;
  std::vector<double> sum(procs, 0.0);
  std::vector<int> count(procs, 0);
  double all = 0.0;
  for (int i = 0; i < 256 * procs; ++i) {
    int v = rng.below(st.n());
    int p = st.processor(v);
    const std::vector<int>& fr = st.free_cores(p);
    double d = std::fabs(st.delta(v, fr[rng.below(static_cast<int>(fr.size()))]));
    sum[p] += d;
    count[p] += 1;
    all += d;
  }
  for (int p = 0; p < procs; ++p)
    t0[p] = std::max(1e-9, a.t_scale * (count[p] > 0 ? sum[p] / count[p] : all / (256.0 * procs)));
  return t0;
}

}  // namespace

std::vector<int> refine_system(const LogicalGraph& g, const SystemSpec& sys, std::vector<int> core,
                               const SystemRefineOptions& opt) {
  const AnnealOptions& a = opt.anneal;
  if (a.window < 0) throw Error("refine_system", "the move window must be >= 0");
  if (!(opt.cross_share >= 0.0 && opt.cross_share <= 1.0))
    throw Error("refine_system", fmt::format("cross share {} is not in [0, 1]", opt.cross_share));
  const int n = g.num_nodes();
  TESSERA_CHECK(static_cast<int>(core.size()) == n, "refine_system: placement size != node count");
  if (n < 2) return core;
  Rng rng(a.seed);
  SystemAnnealer st(g, sys, std::move(core));
  const std::vector<double> t0 = start_temperatures(st, sys.processors, a, rng);
  std::vector<int> all_free;
  for (int p = 0; p < sys.processors; ++p)
    all_free.insert(all_free.end(), st.free_cores(p).begin(), st.free_cores(p).end());
  double cost = placement_cost(g, sys, st.pos()), best = cost;
  std::vector<int> best_pos = st.pos();
  const auto begin = std::chrono::steady_clock::now();
  double cooled = 1.0;  // temperature / start temperature
  bool cross = false;   // moves to other processors are on
  for (long long k = 0;; ++k) {
    if ((k & 1023) == 0) {  // budget check and temperature update every 1024 moves
      double progress = budget_progress(a, k, begin);
      if (cost < best - 1e-9) {
        best = cost;
        best_pos = st.pos();
      }
      if (progress >= 1.0) break;
      cooled = std::pow(a.t_end_ratio, progress);
      cross = opt.cross_share > 0.0 && progress >= opt.cross_from;
    }
    if (a.max_moves >= 0 && k >= a.max_moves) break;
    int v = rng.below(n);
    int c = -1;
    if (a.window == 0) {
      c = all_free[rng.below(static_cast<int>(all_free.size()))];
    } else {
      int q = st.processor(v);
      if (cross && !st.adj(v).empty() && rng.uniform() < opt.cross_share)
        q = st.processor(st.adj(v)[rng.below(static_cast<int>(st.adj(v).size()))].node);
      c = st.window_target(v, q, a.window, rng);
    }
    if (c < 0 || c == st.pos()[v]) continue;
    double d = st.delta(v, c);
    const int pv = st.processor(v);
    const double tm = t0[pv] * cooled * (sys.processor_of(c) == pv ? 1.0 : opt.cross_t_ratio);
    // exp(-40) < 1e-17: such a move is never accepted, so its exponential is not computed.
    if (d <= 0.0 || (d < 40.0 * tm && rng.uniform() < std::exp(-d / tm))) {
      st.apply(v, c);
      cost += d;
    }
  }
  if (cost < best - 1e-9) best_pos = st.pos();
  return best_pos;
}

}  // namespace tessera::mapper
