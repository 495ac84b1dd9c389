// SystemSpec: the machine above one core — chips, cores per chip, boards, the inter-chip topology
// and its links, the exchange protocol's queues, the barrier and the host link.
//
// Read with ConfigReader under "system.*" from the same JSON files as "core.*". Every key has a
// default that describes ONE chip with ONE core, so a config without a "system" object keeps its
// single-core meaning. The part the packet fabric reads (chips, topology, links, packets, queues,
// the on-chip path) is fabric::FabricSpec (fabric/fabric_spec.h: topologies, duplex, units), which
// SystemSpec extends with boards, the barrier and the host link. system.failed_links ("a-b,c-d")
// removes links to study degraded machines.
#pragma once

#include <cstdint>
#include <string>

#include "common/config.h"
#include "fabric/fabric_spec.h"

namespace tessera::system {

// The fabric's topology and link types and time conversions, under the names the system's config
// and reports use.
using fabric::Duplex;
using fabric::duplex_name;
using fabric::ns_to_ps;
using fabric::Topology;
using fabric::topology_name;
using fabric::transfer_ps;

// Where the hardware barrier sits in a superstep (docs/system.md's three variants).
enum class BarrierPlacement : uint8_t { kComputeToExchange, kExchangeToCompute, kBoth };

const char* barrier_placement_name(BarrierPlacement b);

struct SystemSpec : fabric::FabricSpec {
  int chips_per_board = 1;
  int boards = 1;  // chips == chips_per_board * boards

  // barrier
  double barrier_latency_ns = 1000;
  BarrierPlacement barrier_placement = BarrierPlacement::kBoth;

  // host link (host <-> each chip)
  double host_gbytes_per_s = 16;
  double host_latency_ns = 1000;

  int processors() const { return chips * cores_per_chip; }
};

// Reads and validates; unknown keys are the caller's to reject with reader.finish().
SystemSpec read_system_spec(ConfigReader& reader);
// Validates a spec built in code (same checks and messages as the reader, where = "system").
void validate_system_spec(const SystemSpec& spec);
// The system section of a whole config file (system/machine_spec.h: both sections validated,
// unknown keys rejected); empty path: the built-in defaults.
SystemSpec load_system_spec(const std::string& path);

}  // namespace tessera::system
