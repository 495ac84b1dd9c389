// Routing of a placement and its cost (docs/mapper.md, "Reward").
//
// A placement gives every logical node a global core (see system.h). Intra-processor edges are
// routed on their processor's mesh with the chosen turn model; multicast is replicate-at-source
// (each edge of a multicast node is its own unicast route), because a unicast route set that obeys
// a turn model is deadlock-free by construction, which a tree fork in a wormhole router is not
// without extra buffering. Inter-processor edges cross the processor interconnect
// (processor_hops each); their on-chip segments are not modelled.
//
// Costs: cost_intra = sum w * hops; cost_inter = sum w * processor_hops; the total weighs an
// inter-processor hop by link_bandwidth / inter_link_bandwidth. Directional costs cc_E/W/N/S sum
// w * (hops taken in that direction) over the routes. Reward (spec):
//   r = -(max(cc_W, cc_E) + max(cc_N, cc_S)) * exp(dl_ratio),
//   dl_ratio = prohibited turns taken by the routes / max(1, multicast paths in use),
// where a multicast path in use is a route whose source node is multicast, and a prohibited turn is
// one the selected model forbids ('free' routing is counted against the XY table). Turn-model
// routings take no prohibited turn, so for them exp(dl_ratio) = 1.
#pragma once

#include <array>
#include <vector>

#include "mapper/cdg.h"
#include "mapper/graph.h"
#include "mapper/routing.h"
#include "mapper/system.h"

namespace tessera::mapper {

struct Routing {
  TurnModel model = TurnModel::kXY;
  std::vector<Route> routes;      // intra-processor edges only
  std::vector<double> link_load;  // by global channel id
};

struct Metrics {
  double cost_intra = 0.0;
  double cost_inter = 0.0;
  double cost_total = 0.0;
  std::array<double, kNumDirs> dir_cost{};  // E, W, N, S
  double reward = 0.0;
  double max_link_load = 0.0;
  double mean_link_load = 0.0;  // over the links of processors that host at least one node
  double cut = 0.0;             // weight of edges between processors
  int capacity_violations = 0;  // nodes on occupied/shared/out-of-range cores
  int prohibited_turns = 0;
  int multicast_paths = 0;
  double dl_ratio = 0.0;
  bool deadlock_free = true;
  std::vector<int> cycle;
};

Routing route_placement(const LogicalGraph& g, const SystemSpec& sys, const std::vector<int>& core,
                        TurnModel model);
Metrics evaluate(const LogicalGraph& g, const SystemSpec& sys, const std::vector<int>& core,
                 const Routing& routing);
int count_capacity_violations(const SystemSpec& sys, const std::vector<int>& core);
// Sum of w * (Manhattan hops, or weighted processor hops): what minimal routing will cost.
double placement_cost(const LogicalGraph& g, const SystemSpec& sys, const std::vector<int>& core);

}  // namespace tessera::mapper
