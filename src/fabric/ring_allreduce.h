// A synthetic ring all-reduce traffic pattern, posted straight to a Fabric (no programs): the
// fabric's fidelity test and `tessera bench fabric`.
//
// The ring visits every chip once: chips 0..n-1 in order on line/ring topologies; on a 2-D torus a
// snake (row y left to right when y is even, right to left when odd; columns instead when only
// dims_x is even), whose closing hop is one link when a dimension is even. S bytes (whole words)
// are split into n fragments (sizes differ by at most one word); reduce-scatter then all-gather
// take 2(n-1) steps; in step k the chip at ring position i sends one fragment to position i+1.
// Each step is one drain (a superstep); a chip's transfer of step k+1 is ready when its step-k
// fragment has arrived. With directions = 2 half the words go round each way at once.
// bound = 2(n-1)/n * S / (B * directions) + 2(n-1) * link latency (B = link bandwidth).
#pragma once

#include <cstdint>
#include <vector>

#include "fabric/fabric.h"

namespace tessera::fabric {

struct RingAllreduceResult {
  Picos sim_ps = 0;
  Picos bound_ps = 0;
  double efficiency = 0;  // bound / sim
  int steps = 0;
};

// The ring order used for `spec`'s topology.
std::vector<int> ring_order(const FabricSpec& spec);
// Runs the pattern on `fabric` (timing-only transfers: phantom words) from time 0.
RingAllreduceResult run_ring_allreduce(Fabric& fabric, uint64_t bytes, int directions);

}  // namespace tessera::fabric
