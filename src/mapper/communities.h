// Step 1 of the spec: logical nodes -> communities -> processors.
//
// 1. Louvain ("fast unfolding", igraph_community_multilevel) on the undirected graph whose pair
//    weight is |w(u,v)| + |w(v,u)|, seeded for determinism.
// 2. merge_split: Louvain cannot be told k, so its communities are split (the largest community
//    that exceeds the largest free capacity, or the largest one while there are fewer than k, is
//    cut in two along a BFS order from a peripheral node) and merged (the smallest community joins
//    the neighbour it is most connected to among those it fits with; else the smallest one that
//    fits) until there are exactly k.
// 3. Per community: connection weight (sum of |w| of edges to other communities), own node count,
//    neighbouring communities' node count. Priority = connection weight, higher first (ties: more
//    nodes, lower id).
// 4. assign_communities: processors in index order each take the highest-priority unassigned
//    community that fits their free cores (the spec's rule for a processor with fewer free cores
//    than a community); a community that fits nowhere is given to the processor with most spare
//    cores and repair_capacity moves its least-attached nodes out.
// 5. refine (partition_refine.h): k-way Fiduccia-Mattheyses boundary refinement of the inter-
//    processor traffic x hops under the free-core capacities.
// repair_capacity: while a processor holds more nodes than free cores, move its node with the
// least weight to its processor-mates to the processor with spare room it is most connected to.
#pragma once

#include <cstdint>
#include <vector>

#include "mapper/graph.h"
#include "mapper/system.h"

namespace tessera::mapper {

struct CommunityInfo {
  double connection_weight = 0.0;
  int nodes = 0;
  int neighbour_nodes = 0;
};

// Community label per node, labels dense from 0.
std::vector<int> louvain(const LogicalGraph& g, double resolution, uint64_t seed);
// Relabels to exactly k communities (0..k-1), none larger than `cap_max` if the graph allows.
std::vector<int> merge_split(const LogicalGraph& g, std::vector<int> labels, int k, int cap_max);
std::vector<CommunityInfo> community_info(const LogicalGraph& g, const std::vector<int>& labels,
                                          int k);
// Processor per community given free cores per processor; -1 if no processor could take it.
std::vector<int> assign_communities(const std::vector<CommunityInfo>& info,
                                    const std::vector<int>& free_cores);
// Moves nodes until every processor's node count <= its free cores. Throws Error if the system has
// fewer free cores than nodes.
void repair_capacity(const LogicalGraph& g, const std::vector<int>& free_cores,
                     std::vector<int>& proc);

// Louvain resolutions tried by processor_stage_louvain with refinement; graphs of more than
// kMultiResolutionMaxNodes nodes use resolution 1 only (time: each run costs a Louvain, a
// merge/split and an FM refinement; on suite L's ~16k nodes five runs took 20 s).
inline constexpr double kLouvainResolutions[] = {0.25, 0.5, 1.0, 2.0, 4.0};
inline constexpr int kMultiResolutionMaxNodes = 4096;

// The whole processor stage of the spec: processor per node. Without `refine`: steps 1-4 at
// resolution 1 (the "plain" assignment). With `refine` (the default): steps 1-5 at each resolution
// of kLouvainResolutions (see there), the refined assignment with the lowest inter-processor
// traffic x hops (ties: the first) is kept, and it replaces the plain assignment only if its
// placed_cost_estimate (partition_refine.h: greedy core placement + weighted inter-processor cost)
// is lower.
std::vector<int> processor_stage_louvain(const LogicalGraph& g, const SystemSpec& sys,
                                         uint64_t seed, bool refine = true);
// METIS k-way baseline for the processor stage (target weights = free-core shares), then repair.
std::vector<int> processor_stage_metis(const LogicalGraph& g, const SystemSpec& sys, uint64_t seed);
// Sequential baseline: nodes in id order fill processors in index order.
std::vector<int> processor_stage_sequential(const LogicalGraph& g, const SystemSpec& sys);

}  // namespace tessera::mapper
