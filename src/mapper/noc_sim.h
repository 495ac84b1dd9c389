// Packet-level NoC simulation of one pass of the placed graph's traffic.
//
// Model: node v finishes computing at time compute(v) and then injects, edge by edge in edge order,
// ceil(w / packet_size) packets per out-edge. Intra-processor packets follow their route; each hop
// waits until the link is free (first come first served; ties by packet id), holds it for
// packet_size / link_bandwidth cycles and reaches the next router router_latency cycles after
// leaving: arrive = start + packet_size / bandwidth + router_latency. Inter-processor packets take
// the processor interconnect (all-to-all: one link per ordered pair; mesh: XY over processor links)
// with inter_link_bandwidth and inter_latency. Input buffers are unbounded (store and forward), so
// the simulation always terminates; deadlock freedom of the routes is the CDG check's verdict.
// Makespan = arrival time of the last packet (or the last compute end if there is no traffic).
#pragma once

#include <vector>

#include "mapper/graph.h"
#include "mapper/metrics.h"
#include "mapper/system.h"

namespace tessera::mapper {

struct NocResult {
  double makespan = 0.0;
  long long packets = 0;
  double max_link_utilisation = 0.0;   // busy time / makespan, on-chip links
  double mean_link_utilisation = 0.0;  // over on-chip links that carried traffic
};

NocResult simulate_noc(const LogicalGraph& g, const SystemSpec& sys, const std::vector<int>& core,
                       const Routing& routing);

}  // namespace tessera::mapper
