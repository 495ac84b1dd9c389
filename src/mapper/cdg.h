// Deadlock check: the channel dependency graph (Dally & Seitz) of a set of routes.
//
// Vertices are channels (directed links); every route that uses channel a and then channel b adds
// the dependency a -> b. Wormhole/virtual-cut-through routing with these routes is deadlock-free
// iff the graph is acyclic. find_cycle returns one cycle (channels in order) or an empty vector.
#pragma once

#include <string>
#include <vector>

#include "mapper/routing.h"
#include "mapper/system.h"

namespace tessera::mapper {

// `paths`: channel sequences over channels 0..num_channels-1.
std::vector<int> find_cycle(int num_channels, const std::vector<std::vector<int>>& paths);

struct DeadlockReport {
  bool deadlock_free = true;
  std::vector<int> cycle;  // global channel ids: processor * cores * 4 + local core * 4 + dir
};

DeadlockReport check_deadlock(const std::vector<Route>& routes, const SystemSpec& sys);
// Channel sequence of a route (global channel ids).
std::vector<int> route_channels(const Route& r, const SystemSpec& sys);
// "p0 (1,0)E -> p0 (2,0)S -> ..." for a cycle of global channel ids.
std::string describe_cycle(const std::vector<int>& cycle, const SystemSpec& sys);

}  // namespace tessera::mapper
