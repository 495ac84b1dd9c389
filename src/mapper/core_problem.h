// CoreProblem: step 2's sub-problem, the nodes given to one processor and its free cores.
//
// Positions are local core ids (y * width + x). A core placer returns, per local node, a distinct
// free core. The cost of a core placement is sum over local edges of w * Manhattan distance, which
// is exactly what any minimal routing charges (edges to other processors are not part of it).
#pragma once

#include <cstdlib>
#include <vector>

#include "mapper/graph.h"
#include "mapper/system.h"

namespace tessera::mapper {

struct CoreProblem {
  int width = 1;
  int height = 1;
  std::vector<int> free;                   // free local cores, increasing
  std::vector<int> global;                 // local node -> graph node
  std::vector<Edge> edges;                 // local directed edges
  std::vector<std::vector<Neighbor>> adj;  // local undirected adjacency, weights of both directions
  std::vector<char> multicast;             // per local node

  int n() const { return static_cast<int>(global.size()); }
  int dist(int a, int b) const {
    return std::abs(a % width - b % width) + std::abs(a / width - b / width);
  }
};

CoreProblem make_core_problem(const LogicalGraph& g, const SystemSpec& sys,
                              const std::vector<int>& proc, int p);
// A free single-mesh problem for a whole graph (tests, training).
CoreProblem make_core_problem(const LogicalGraph& g, int width, int height);
double core_cost(const CoreProblem& pb, const std::vector<int>& pos);
// Throws if pos is not n distinct free cores.
void check_core_placement(const CoreProblem& pb, const std::vector<int>& pos);

}  // namespace tessera::mapper
