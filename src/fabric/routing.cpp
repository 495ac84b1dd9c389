#include "fabric/routing.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "common/error.h"

namespace tessera::fabric {

namespace {

std::vector<int> candidate_neighbours(const FabricSpec& s, int a) {
  std::vector<int> c;
  const int n = s.chips;
  if (s.topology == Topology::kTorus2d) {
    const int x = a % s.dims_x, y = a / s.dims_x;
    c = {y * s.dims_x + (x + 1) % s.dims_x, y * s.dims_x + (x + s.dims_x - 1) % s.dims_x,
         ((y + 1) % s.dims_y) * s.dims_x + x, ((y + s.dims_y - 1) % s.dims_y) * s.dims_x + x};
  } else {
    c = {(a + 1) % n, (a + n - 1) % n};
  }
  std::vector<int> out;
  for (int b : c)
    if (s.linked(a, b)) out.push_back(b);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// One step along a ring of n positions from u towards v: the shorter way, ties +1.
int ring_step(int u, int v, int n) {
  const int fwd = (v - u + n) % n;
  return fwd <= n - fwd ? (u + 1) % n : (u + n - 1) % n;
}

}  // namespace

Routing::Routing(const FabricSpec& spec) : m_chips(spec.chips) {
  validate_fabric_spec(spec);
  m_out.resize(m_chips);
  std::map<std::pair<int, int>, int> wire_of;
  for (int a = 0; a < m_chips; ++a) {
    for (int b : candidate_neighbours(spec, a)) {
      const std::pair<int, int> key{std::min(a, b), std::max(a, b)};
      int wire = static_cast<int>(m_channels.size());
      if (spec.duplex == Duplex::kHalf) {
        auto it = wire_of.find(key);
        wire = it == wire_of.end() ? (wire_of[key] = m_wires) : it->second;
      }
      if (spec.duplex == Duplex::kFull || wire == m_wires) ++m_wires;
      m_out[a].push_back(static_cast<int>(m_channels.size()));
      m_channels.push_back({a, b, wire});
    }
  }
  m_next.assign(static_cast<size_t>(m_chips) * m_chips, -1);
  if (spec.failed_links.empty()) {
    for (int c = 0; c < m_chips; ++c)
      for (int d = 0; d < m_chips; ++d)
        if (c != d)
          m_next[static_cast<size_t>(c) * m_chips + d] =
              channel_between(c, preferred_next_chip(spec, c, d));
    return;
  }
  std::vector<int> dist;
  for (int d = 0; d < m_chips; ++d) {
    fill_with_bfs(d, dist);
    for (int c = 0; c < m_chips; ++c) {
      if (c == d) continue;
      if (dist[c] < 0)
        throw Error(
            "system: key 'system.failed_links'",
            fmt::format("chip {} cannot reach chip {}: no path avoids the failed links", c, d));
      for (int ch : m_out[c]) {
        if (dist[m_channels[ch].to] == dist[c] - 1) {
          m_next[static_cast<size_t>(c) * m_chips + d] = ch;
          break;
        }
      }
    }
  }
}

int Routing::preferred_next_chip(const FabricSpec& s, int c, int d) const {
  switch (s.topology) {
    case Topology::kLine:
      return d > c ? c + 1 : c - 1;
    case Topology::kRing:
      return ring_step(c, d, m_chips);
    case Topology::kTorus2d: {
      const int cx = c % s.dims_x, cy = c / s.dims_x, dx = d % s.dims_x, dy = d / s.dims_x;
      if (cx != dx) return cy * s.dims_x + ring_step(cx, dx, s.dims_x);
      return ring_step(cy, dy, s.dims_y) * s.dims_x + cx;
    }
  }
  return -1;
}

void Routing::fill_with_bfs(int dst, std::vector<int>& dist) const {
  dist.assign(m_chips, -1);
  std::vector<int> frontier{dst};
  dist[dst] = 0;
  for (size_t i = 0; i < frontier.size(); ++i) {
    const int u = frontier[i];
    for (int ch : m_out[u]) {  // links are symmetric: u's neighbours reach u in one hop
      const int v = m_channels[ch].to;
      if (dist[v] < 0) {
        dist[v] = dist[u] + 1;
        frontier.push_back(v);
      }
    }
  }
}

int Routing::channel_between(int a, int b) const {
  if (a < 0 || a >= m_chips) return -1;
  for (int ch : m_out[a])
    if (m_channels[ch].to == b) return ch;
  return -1;
}

std::vector<int> Routing::path(int src, int dst) const {
  std::vector<int> p{src};
  while (p.back() != dst) {
    const int ch = next_channel(p.back(), dst);
    TESSERA_CHECK(ch >= 0 && static_cast<int>(p.size()) <= m_chips, "routing tables form a loop");
    p.push_back(m_channels[ch].to);
  }
  return p;
}

}  // namespace tessera::fabric
