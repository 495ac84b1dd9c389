// Simulated annealing core placer (see placers.h for the contract).
//
// State: pos[node] and at[core] (node or -1). A move picks a node and a free core; the cost delta
// is computed from the moved node's (and the swapped node's) neighbours only.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "mapper/placers.h"
#include "mapper/rng.h"

namespace tessera::mapper {
namespace {

class Annealer {
 public:
  Annealer(const CoreProblem& pb, std::vector<int> pos)
      : m_pb(pb),
        m_pos(std::move(pos)),
        m_at(pb.width * pb.height, -1),
        m_free(pb.width * pb.height, 0) {
    for (int v = 0; v < pb.n(); ++v) m_at[m_pos[v]] = v;
    for (int c : pb.free) m_free[c] = 1;
    for (int c = 0; c < pb.width * pb.height; ++c) {
      m_x.push_back(c % pb.width);
      m_y.push_back(c / pb.width);
    }
  }

  // Manhattan distance between cores a and b (CoreProblem::dist without the divisions).
  int dist(int a, int b) const { return std::abs(m_x[a] - m_x[b]) + std::abs(m_y[a] - m_y[b]); }

  // Cost change if node v moves to core c (swapping with the node there, if any).
  double delta(int v, int c) const {
    int u = m_at[c];
    int pv = m_pos[v];
    double d = 0.0;
    for (const Neighbor& nb : m_pb.adj[v]) {
      if (nb.node == u) continue;  // the v-u edge keeps its length under a swap
      d += nb.weight * (dist(c, m_pos[nb.node]) - dist(pv, m_pos[nb.node]));
    }
    if (u >= 0)
      for (const Neighbor& nb : m_pb.adj[u]) {
        if (nb.node == v) continue;
        d += nb.weight * (dist(pv, m_pos[nb.node]) - dist(c, m_pos[nb.node]));
      }
    return d;
  }

  // Keeps, per node, the weighted sums of its neighbours' columns and rows, updated by apply(), so
  // that a centroid-window target costs O(1) instead of a pass over the node's neighbours.
  void track_centroids() {
    m_sx.assign(m_pb.n(), 0.0);
    m_sy.assign(m_pb.n(), 0.0);
    m_sw.assign(m_pb.n(), 0.0);
    for (int v = 0; v < m_pb.n(); ++v)
      for (const Neighbor& nb : m_pb.adj[v]) {
        m_sx[v] += nb.weight * m_x[m_pos[nb.node]];
        m_sy[v] += nb.weight * m_y[m_pos[nb.node]];
        m_sw[v] += nb.weight;
      }
  }

  void apply(int v, int c) {
    int u = m_at[c];
    int pv = m_pos[v];
    if (!m_sw.empty()) {
      shift_centroids(v, m_x[c] - m_x[pv], m_y[c] - m_y[pv]);
      if (u >= 0) shift_centroids(u, m_x[pv] - m_x[c], m_y[pv] - m_y[c]);
    }
    m_at[pv] = u;
    if (u >= 0) m_pos[u] = pv;
    m_at[c] = v;
    m_pos[v] = c;
  }

  const std::vector<int>& pos() const { return m_pos; }

  // A core in the (2r+1)^2 square around the centre of v's neighbours (see AnnealOptions::centre),
  // or -1 (off mesh / occupied / no neighbours).
  int window_target(int v, int r, WindowCentre centre, Rng& rng) {
    int cx = 0, cy = 0;
    if (!(centre == WindowCentre::kMedian ? weighted_median(v, cx, cy)
                                          : weighted_centroid(v, cx, cy)))
      return -1;
    int x = cx + rng.below(2 * r + 1) - r;
    int y = cy + rng.below(2 * r + 1) - r;
    if (x < 0 || y < 0 || x >= m_pb.width || y >= m_pb.height) return -1;
    int c = y * m_pb.width + x;
    return m_free[c] ? c : -1;
  }

  // Best-improvement step for v: evaluates every free core in the (2r+1)^2 square around the
  // weighted median of v's neighbours (moves and swaps), applies the lowest delta if it is below
  // -eps and returns that delta (0 if none). Ties: the first core in row-major order of the square.
  double improve(int v, int r) {
    int cx = 0, cy = 0;
    if (!weighted_median(v, cx, cy)) return 0.0;
    int best_c = -1;
    double best_d = -1e-9;
    for (int y = std::max(0, cy - r); y <= std::min(m_pb.height - 1, cy + r); ++y)
      for (int x = std::max(0, cx - r); x <= std::min(m_pb.width - 1, cx + r); ++x) {
        int c = y * m_pb.width + x;
        if (!m_free[c] || c == m_pos[v]) continue;
        double d = delta(v, c);
        if (d < best_d) best_d = d, best_c = c;
      }
    if (best_c < 0) return 0.0;
    apply(v, best_c);
    return best_d;
  }

 private:
  void shift_centroids(int v, int dx, int dy) {
    for (const Neighbor& nb : m_pb.adj[v]) {
      m_sx[nb.node] += nb.weight * dx;
      m_sy[nb.node] += nb.weight * dy;
    }
  }

  bool weighted_centroid(int v, int& cx, int& cy) const {
    if (!m_sw.empty()) {
      if (m_sw[v] == 0.0) return false;
      cx = static_cast<int>(std::lround(m_sx[v] / m_sw[v]));
      cy = static_cast<int>(std::lround(m_sy[v] / m_sw[v]));
      return true;
    }
    double sx = 0.0, sy = 0.0, sw = 0.0;
    for (const Neighbor& nb : m_pb.adj[v]) {
      sx += nb.weight * m_x[m_pos[nb.node]];
      sy += nb.weight * m_y[m_pos[nb.node]];
      sw += nb.weight;
    }
    if (sw == 0.0) return false;
    cx = static_cast<int>(std::lround(sx / sw));
    cy = static_cast<int>(std::lround(sy / sw));
    return true;
  }

  // Weighted median column and row of v's neighbours: the position minimising sum w x |x - x_u|
  // (resp. y), i.e. v's Manhattan cost, separately per axis (lowest such column / row).
  bool weighted_median(int v, int& cx, int& cy) {
    double sw = 0.0;
    for (const Neighbor& nb : m_pb.adj[v]) {
      m_col_w[m_x[m_pos[nb.node]]] += nb.weight;
      m_row_w[m_y[m_pos[nb.node]]] += nb.weight;
      sw += nb.weight;
    }
    if (sw == 0.0) return false;
    cx = median_index(m_col_w, sw);
    cy = median_index(m_row_w, sw);
    return true;
  }

  // First index where the running sum reaches half of `total`; clears `w` on the way.
  static int median_index(std::vector<double>& w, double total) {
    double run = 0.0;
    int at = -1;
    for (size_t i = 0; i < w.size(); ++i) {
      run += w[i];
      w[i] = 0.0;
      if (at < 0 && 2.0 * run >= total) at = static_cast<int>(i);
    }
    return at < 0 ? static_cast<int>(w.size()) - 1 : at;
  }

  const CoreProblem& m_pb;
  std::vector<int> m_pos;
  std::vector<int> m_at;
  std::vector<char> m_free;
  std::vector<int> m_x, m_y;  // column and row of each core
  std::vector<double> m_sx, m_sy,
      m_sw;  // per node, neighbours' weighted column / row sums, weight sum (if tracked)
  std::vector<double> m_col_w =
      std::vector<double>(m_pb.width, 0.0);  // scratch, all zero between calls
  std::vector<double> m_row_w = std::vector<double>(m_pb.height, 0.0);
};

}  // namespace

double budget_progress(const AnnealOptions& opt, long long k,
                       std::chrono::steady_clock::time_point begin) {
  if (opt.max_moves >= 0) return static_cast<double>(k) / std::max(1LL, opt.max_moves);
  std::chrono::duration<double> el = std::chrono::steady_clock::now() - begin;
  return el.count() / std::max(1e-9, opt.seconds);
}

std::vector<int> anneal(const CoreProblem& pb, std::vector<int> start, const AnnealOptions& opt) {
  const int n = pb.n();
  if (n < 2 || pb.free.size() < 2) return start;
  Rng rng(opt.seed);
  Annealer st(pb, std::move(start));
  if (opt.window > 0 && opt.centre == WindowCentre::kCentroid) st.track_centroids();
  const int nf = static_cast<int>(pb.free.size());
  double t0 = opt.t_start;
  if (t0 < 0.0) {  // mean |delta| of 256 random moves
    double s = 0.0;
    for (int i = 0; i < 256; ++i) s += std::fabs(st.delta(rng.below(n), pb.free[rng.below(nf)]));
    t0 = std::max(1e-9, opt.t_scale * s / 256.0);
  }
  const double t1 = t0 * opt.t_end_ratio;
  double cost = core_cost(pb, st.pos()), best = cost;
  std::vector<int> best_pos = st.pos();
  const auto begin = std::chrono::steady_clock::now();
  double t = t0;
  for (long long k = 0;; ++k) {
    if ((k & 1023) == 0) {  // budget check and temperature update every 1024 moves
      double progress = budget_progress(opt, k, begin);
      if (progress >= 1.0) break;
      t = t0 * std::pow(t1 / t0, progress);
    }
    if (opt.max_moves >= 0 && k >= opt.max_moves) break;
    int v = rng.below(n);
    int c =
        opt.window > 0 ? st.window_target(v, opt.window, opt.centre, rng) : pb.free[rng.below(nf)];
    if (c < 0) continue;
    if (c == st.pos()[v]) continue;
    double d = st.delta(v, c);
    // exp(-40) < 1e-17: such a move is never accepted, so its exponential is not computed.
    if (d <= 0.0 || (d < 40.0 * t && rng.uniform() < std::exp(-d / t))) {
      st.apply(v, c);
      cost += d;
      if (cost < best - 1e-9) {
        best = cost;
        best_pos = st.pos();
      }
    }
  }
  return best_pos;
}

std::vector<int> polish(const CoreProblem& pb, std::vector<int> pos, int window, int max_passes) {
  Annealer st(pb, std::move(pos));
  for (int pass = 0; pass < max_passes; ++pass) {
    double gain = 0.0;
    for (int v = 0; v < pb.n(); ++v) gain += st.improve(v, window);
    if (gain == 0.0) break;
  }
  return st.pos();
}

}  // namespace tessera::mapper
