// Whole-system refinement: annealing over all processors at once, on the
// benchmark's objective `cost_total` (metrics.h) instead of one processor's intra cost.
//
// State: a global core per node (SystemSpec numbering). Cost of an edge of weight w between cores a
// and b: w x Manhattan distance if a and b are on one processor, else w x processor hops x
// (link_bandwidth / inter_link_bandwidth) - exactly `placement_cost`, which for minimal routings is
// `cost_total`. A move takes a random node v to a core of a processor q, swapping with the node
// there if occupied; occupied cores are never targets, so every state is a valid placement (one
// node per free core) and processor capacities hold by construction.
//   q = v's own processor, or, once `cross_from` of the budget is spent and with probability
//   `cross_share`, the processor of a random neighbour of v (uniform over v's neighbour list); the
//   target core is drawn uniformly from the (2 window + 1)^2 square around the weighted centroid of
//   v's neighbours on q (a move is skipped when it falls off the mesh, on an occupied core or v has
//   no neighbour on q).
// Metropolis acceptance at the temperature of v's processor (times cross_t_ratio for a move to
// another processor); geometric cooling from t_scale x the mean |delta| of random moves of the
// processor's nodes within it (or t_start if >= 0) to t_end_ratio x that, updated every 1024 moves.
// Returns the cheapest of the start, the states at the temperature updates and the final state, so
// never costs more than the start (a snapshot of a 16k-node state after every improving move would
// cost more than the moves). With max_moves >= 0 the result depends only on the inputs and the
// seed. cross_share = 0 keeps every node on its processor.
// window = 0 is the textbook move set over the whole system (method `sa-system`): the target core
// is uniform over the free cores of all processors (cross_share and cross_from are not used; a
// move to another processor is accepted at cross_t_ratio x the temperature).
//
// Why the late start and the lower temperature of cross moves: on suite M, cross moves from the
// start at full temperature trade inter- for intra-processor cost while the cores are still hot
// and end worse on tile graphs (+25% cost vs processor scope, seed 1); see docs/mapper.md.
#pragma once

#include <vector>

#include "mapper/graph.h"
#include "mapper/placers.h"
#include "mapper/system.h"

namespace tessera::mapper {

struct SystemRefineOptions {
  AnnealOptions anneal;  // budget, schedule, seed, window (>= 0); the centre is always the centroid
  double cross_share = 0.5;    // probability that a move targets a neighbour's processor
  double cross_t_ratio = 0.3;  // moves to another processor are accepted at this x the temperature
  double cross_from = 0.6;     // moves to another processor start at this share of the budget
};

std::vector<int> refine_system(const LogicalGraph& g, const SystemSpec& sys, std::vector<int> core,
                               const SystemRefineOptions& opt);

}  // namespace tessera::mapper
