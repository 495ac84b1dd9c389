// map_graph: the whole mapping pipeline (docs/mapper.md) and its baselines, one entry point.
//
// 1. processor stage: "louvain" (the spec: communities + priority rule), "metis" (k-way) or
//    "sequential"; all end within each processor's free cores.
// 2. core stage, per processor, by `method`: random, row-major, snake, hilbert, greedy, sa
//    (textbook annealing from random, per processor), scotch (graphMap), rl (the policy, one step),
//    rl+refine (the policy's placement refined by annealing with local moves towards the
//    neighbours' centroid and a final descent), greedy+refine (the same refinement from the greedy
//    placement, to separate the start's share). The refinement runs over the whole system on
//    cost_total, its moves crossing processors late in the schedule (RefineScope::kSystem, the
//    default), or per processor (kProcessor). sa-system: textbook annealing (uniform
//    targets, start 1.0, end 0.001 x start) from random cores over the whole system on cost_total,
//    so its moves may cross processors too (an extra baseline).
// 3. routing with the turn model, metrics, CDG deadlock check.
// Deterministic for the same inputs and seed when the annealing budget is given in moves; with a
// wall-clock budget (anneal_seconds > 0) the result depends on machine speed.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mapper/graph.h"
#include "mapper/metrics.h"
#include "mapper/placers.h"
#include "mapper/policy.h"
#include "mapper/routing.h"
#include "mapper/system.h"

namespace tessera::mapper {

// Scope of the refinement of rl+refine / greedy+refine: each processor's cores alone (the
// processor stage's assignment is final), or the whole system on cost_total with moves that may
// cross processors (system_refine.h).
enum class RefineScope { kProcessor, kSystem };

struct MapOptions {
  std::string method = "rl+refine";
  std::string processor_stage = "louvain";
  TurnModel routing = TurnModel::kXY;
  uint64_t seed = 1;
  long long anneal_moves_per_node = 400;  // annealing budget when anneal_seconds <= 0
  double anneal_seconds = 0.0;     // wall-clock budget for the whole core stage (split by nodes)
  const Policy* policy = nullptr;  // required by rl and rl+refine
  double refine_t_scale = 1.0;     // refinement start temperature (x mean |delta| of random moves)
  int refine_window = 2;           // refinement move radius around the neighbours' centre
  WindowCentre refine_centre = WindowCentre::kCentroid;  // weighted centroid or median (per axis)
  double refine_t_end_ratio = 1e-2;  // refinement final / start temperature (SA keeps 1e-3)
  int refine_polish = 3;             // radius of the final descent (placers.h polish); 0 = none
  RefineScope refine_scope = RefineScope::kSystem;
  // kSystem (system_refine.h): share of moves aimed at a neighbour's processor, their temperature
  // relative to the others', and the share of the budget before they start (docs/mapper.md).
  double refine_cross = 0.5;
  double refine_cross_t = 0.3;
  double refine_cross_from = 0.6;
};

struct MapResult {
  std::vector<int> proc;  // processor per node
  std::vector<int> core;  // global core per node
  Routing routing;
  Metrics metrics;
  std::vector<std::pair<std::string, double>> stage_seconds;  // processor, core, routing+metrics
};

std::vector<std::string> core_methods();
std::vector<int> processor_stage(const LogicalGraph& g, const SystemSpec& sys,
                                 const std::string& name, uint64_t seed);
MapResult map_graph(const LogicalGraph& g, const SystemSpec& sys, const MapOptions& opt);

}  // namespace tessera::mapper
