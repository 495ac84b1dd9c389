#include "mapper/noc_sim.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>
#include <tuple>

#include "common/error.h"

namespace tessera::mapper {
namespace {

// A link in the simulation: on-chip channels first (global channel id), then processor links.
struct LinkPath {
  std::vector<int> links;
  std::vector<double> hold;     // serialisation time per hop
  std::vector<double> latency;  // per hop
};

struct Event {
  double time;
  long long packet;
  int hop;
  bool operator>(const Event& o) const {
    return std::tie(time, packet, hop) > std::tie(o.time, o.packet, o.hop);
  }
};

// Processor-level path from a to b as processor-link ids (offset by `base`).
std::vector<int> processor_links(const SystemSpec& sys, int a, int b, int base) {
  const int P = sys.processors;
  if (sys.interconnect == Interconnect::kAllToAll) return {base + a * P + b};
  std::vector<int> out;
  int x = a % sys.proc_mesh_width, y = a / sys.proc_mesh_width;
  const int tx = b % sys.proc_mesh_width, ty = b / sys.proc_mesh_width;
  while (x != tx || y != ty) {
    int from = y * sys.proc_mesh_width + x;
    if (x != tx)
      x += tx > x ? 1 : -1;
    else
      y += ty > y ? 1 : -1;
    out.push_back(base + from * P + (y * sys.proc_mesh_width + x));
  }
  return out;
}

}  // namespace

NocResult simulate_noc(const LogicalGraph& g, const SystemSpec& sys, const std::vector<int>& core,
                       const Routing& routing) {
  const int on_chip = sys.total_cores() * kNumDirs;
  const int num_links = on_chip + sys.processors * sys.processors;
  std::vector<int> route_of(g.num_edges(), -1);
  for (size_t i = 0; i < routing.routes.size(); ++i)
    route_of[routing.routes[i].edge] = static_cast<int>(i);

  std::vector<LinkPath> paths(g.num_edges());
  for (int e = 0; e < g.num_edges(); ++e) {
    const Edge& ed = g.edges()[e];
    LinkPath& p = paths[e];
    if (route_of[e] >= 0) {
      p.links = route_channels(routing.routes[route_of[e]], sys);
      p.hold.assign(p.links.size(), sys.packet_size / sys.link_bandwidth);
      p.latency.assign(p.links.size(), sys.router_latency);
    } else {
      p.links = processor_links(sys, sys.processor_of(core[ed.src]), sys.processor_of(core[ed.dst]),
                                on_chip);
      p.hold.assign(p.links.size(), sys.packet_size / sys.inter_link_bandwidth);
      p.latency.assign(p.links.size(), sys.inter_latency);
    }
  }
  // Packets: (edge) in injection order; packet ids are dense and follow (node, edge, index).
  std::vector<int> packet_edge;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> queue;
  NocResult res;
  for (int v = 0; v < g.num_nodes(); ++v) {
    res.makespan = std::max(res.makespan, g.node(v).compute);
    for (const Neighbor& nb : g.out(v)) {
      long long n = std::max(1LL, static_cast<long long>(std::ceil(nb.weight / sys.packet_size)));
      for (long long k = 0; k < n; ++k) {
        long long id = static_cast<long long>(packet_edge.size());
        packet_edge.push_back(nb.edge);
        queue.push({g.node(v).compute, id, 0});
      }
    }
  }
  res.packets = static_cast<long long>(packet_edge.size());
  std::vector<double> free_at(num_links, 0.0), busy(num_links, 0.0);
  while (!queue.empty()) {
    Event ev = queue.top();
    queue.pop();
    const LinkPath& p = paths[packet_edge[ev.packet]];
    if (ev.hop == static_cast<int>(p.links.size())) {
      res.makespan = std::max(res.makespan, ev.time);
      continue;
    }
    int link = p.links[ev.hop];
    double start = std::max(ev.time, free_at[link]);
    free_at[link] = start + p.hold[ev.hop];
    busy[link] += p.hold[ev.hop];
    queue.push({start + p.hold[ev.hop] + p.latency[ev.hop], ev.packet, ev.hop + 1});
  }
  double sum = 0.0;
  int used = 0;
  if (res.makespan > 0.0)
    for (int l = 0; l < on_chip; ++l) {
      if (busy[l] == 0.0) continue;
      double u = busy[l] / res.makespan;
      res.max_link_utilisation = std::max(res.max_link_utilisation, u);
      sum += u;
      ++used;
    }
  res.mean_link_utilisation = used ? sum / used : 0.0;
  return res;
}

}  // namespace tessera::mapper
