// Boundary refinement of a processor assignment (the processor stage's last step, after Louvain,
// merge/split and the priority rule): k-way Fiduccia-Mattheyses under capacity.
//
// Objective: the inter-processor traffic x hops, sum over edges (u, v) of |w| x
// processor_hops(proc[u], proc[v]) (the cut when the interconnect is all-to-all). Constraint: no
// processor holds more nodes than its free cores (a move into a full processor is never made).
//
// Algorithm (Fiduccia-Mattheyses with lazy gains, k-way): a pass repeatedly moves the unlocked node
// whose best move (to a processor with room) lowers the objective most - negative gains included,
// so that a sequence can climb out of a local minimum - and locks it; the pass stops when no
// candidate is left or after `stall` moves without a new best, and the moves after the best
// prefix are undone. Passes repeat while one improves the objective (at most `max_passes`).
// Candidates are the nodes with a neighbour on another processor. Deterministic: ties go to the
// lower node id, then the lower processor id.
#pragma once

#include <vector>

#include "mapper/graph.h"
#include "mapper/system.h"

namespace tessera::mapper {

struct RefineStats {
  double before = 0.0;  // objective before
  double after = 0.0;   // objective after
  int passes = 0;
  int moves = 0;  // moves kept
};

// Inter-processor traffic x hops of an assignment.
double inter_processor_cost(const LogicalGraph& g, const SystemSpec& sys,
                            const std::vector<int>& proc);
// Estimate of the mapped cost_total of an assignment (metrics.h): per processor the intra cost of
// the greedy core placement (placers.h), plus the inter-processor traffic x hops x
// (link_bandwidth / inter_link_bandwidth). Deterministic; used to choose between assignments.
double placed_cost_estimate(const LogicalGraph& g, const SystemSpec& sys,
                            const std::vector<int>& proc);
// Refines `proc` in place; never raises the objective and never exceeds `free_cores`. `proc` must
// already be within capacity.
RefineStats refine_partition(const LogicalGraph& g, const SystemSpec& sys,
                             const std::vector<int>& free_cores, std::vector<int>& proc,
                             int max_passes = 8);

}  // namespace tessera::mapper
