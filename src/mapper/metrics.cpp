#include "mapper/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "common/error.h"

namespace tessera::mapper {
namespace {

double inter_factor(const SystemSpec& sys) {
  return sys.link_bandwidth / sys.inter_link_bandwidth;
}

int count_turns(const Route& r, const SystemSpec& sys, TurnModel table) {
  int n = 0;
  int core = r.start;
  for (size_t i = 0; i < r.hops.size(); ++i) {
    if (i > 0 && !turn_allowed(table, core % sys.width, core / sys.width, r.hops[i - 1], r.hops[i]))
      ++n;
    core = step(core, r.hops[i], sys.width);
  }
  return n;
}

}  // namespace

Routing route_placement(const LogicalGraph& g, const SystemSpec& sys, const std::vector<int>& core,
                        TurnModel model) {
  TESSERA_CHECK(static_cast<int>(core.size()) == g.num_nodes(), "placement size != node count");
  Routing out;
  out.model = model;
  out.link_load.assign(static_cast<size_t>(sys.total_cores()) * kNumDirs, 0.0);
  std::vector<MeshRouter> routers;
  for (int p = 0; p < sys.processors; ++p) routers.emplace_back(model, sys.width, sys.height);
  const int cpp = sys.cores_per_processor();
  for (int e = 0; e < g.num_edges(); ++e) {
    const Edge& ed = g.edges()[e];
    int a = core[ed.src], b = core[ed.dst];
    if (sys.processor_of(a) != sys.processor_of(b)) continue;
    int p = sys.processor_of(a);
    Route r{e, p, a % cpp, routers[p].route(a % cpp, b % cpp, ed.weight)};
    out.routes.push_back(std::move(r));
  }
  for (int p = 0; p < sys.processors; ++p) {
    const auto& l = routers[p].loads();
    std::copy(l.begin(), l.end(), out.link_load.begin() + static_cast<size_t>(p) * cpp * kNumDirs);
  }
  return out;
}

int count_capacity_violations(const SystemSpec& sys, const std::vector<int>& core) {
  std::vector<int> used(sys.total_cores(), 0);
  int bad = 0;
  for (int c : core) {
    if (c < 0 || c >= sys.total_cores() || sys.is_occupied(c)) {
      ++bad;
      continue;
    }
    if (used[c]++ > 0) ++bad;
  }
  return bad;
}

double placement_cost(const LogicalGraph& g, const SystemSpec& sys, const std::vector<int>& core) {
  double cost = 0.0;
  for (const Edge& e : g.edges()) {
    int a = core[e.src], b = core[e.dst];
    int pa = sys.processor_of(a), pb = sys.processor_of(b);
    if (pa == pb)
      cost +=
          e.weight * (std::abs(sys.x_of(a) - sys.x_of(b)) + std::abs(sys.y_of(a) - sys.y_of(b)));
    else
      cost += e.weight * sys.processor_hops(pa, pb) * inter_factor(sys);
  }
  return cost;
}

Metrics evaluate(const LogicalGraph& g, const SystemSpec& sys, const std::vector<int>& core,
                 const Routing& routing) {
  Metrics m;
  TurnModel table = routing.model == TurnModel::kFree ? TurnModel::kXY : routing.model;
  for (const Route& r : routing.routes) {
    const Edge& e = g.edges()[r.edge];
    m.cost_intra += e.weight * static_cast<double>(r.hops.size());
    for (Dir d : r.hops) m.dir_cost[static_cast<int>(d)] += e.weight;
    m.prohibited_turns += count_turns(r, sys, table);
    if (g.node(e.src).multicast) ++m.multicast_paths;
  }
  for (const Edge& e : g.edges()) {
    int pa = sys.processor_of(core[e.src]), pb = sys.processor_of(core[e.dst]);
    if (pa == pb) continue;
    m.cut += e.weight;
    m.cost_inter += e.weight * sys.processor_hops(pa, pb);
  }
  m.cost_total = m.cost_intra + m.cost_inter * inter_factor(sys);
  m.dl_ratio = static_cast<double>(m.prohibited_turns) / std::max(1, m.multicast_paths);
  m.reward = -(std::max(m.dir_cost[0], m.dir_cost[1]) + std::max(m.dir_cost[2], m.dir_cost[3])) *
             std::exp(m.dl_ratio);
  std::vector<bool> used(sys.processors, false);
  for (int c : core) used[sys.processor_of(c)] = true;
  double sum = 0.0;
  long links = 0;
  const int cpp = sys.cores_per_processor();
  for (int p = 0; p < sys.processors; ++p) {
    if (!used[p]) continue;
    for (int c = 0; c < cpp; ++c)
      for (int d = 0; d < kNumDirs; ++d) {
        int x = c % sys.width, y = c / sys.width;
        bool exists = (d == 0 && x + 1 < sys.width) || (d == 1 && x > 0) || (d == 2 && y > 0) ||
                      (d == 3 && y + 1 < sys.height);
        if (!exists) continue;
        double l = routing.link_load[(static_cast<size_t>(p) * cpp + c) * kNumDirs + d];
        m.max_link_load = std::max(m.max_link_load, l);
        sum += l;
        ++links;
      }
  }
  m.mean_link_load = links ? sum / links : 0.0;
  m.capacity_violations = count_capacity_violations(sys, core);
  DeadlockReport dr = check_deadlock(routing.routes, sys);
  m.deadlock_free = dr.deadlock_free;
  m.cycle = dr.cycle;
  return m;
}

}  // namespace tessera::mapper
