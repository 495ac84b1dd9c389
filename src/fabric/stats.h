// Fabric statistics, accumulated over a Fabric's life (all drains).
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::fabric {

struct LinkStats {  // one direction of one inter-chip link: from_chip -> to_chip
  int from_chip = 0;
  int to_chip = 0;
  uint64_t wire_bytes = 0;     // header + payload of every transmission, retransmissions included
  uint64_t payload_bytes = 0;  // payload of accepted packets (each counted once)
  uint64_t packets = 0;        // transmissions (first sends + retransmissions)
  uint64_t retransmissions = 0;
  uint64_t dropped = 0;    // lost on the wire
  uint64_t refused = 0;    // arrived at a full queue
  int64_t busy_ps = 0;     // time the sender held the wire
  int max_queue = 0;       // output queue occupancy (queued + unacknowledged packets)
  double mean_queue = 0;   // time-weighted over [0, end of last drain]
  double utilisation = 0;  // busy_ps / end of last drain
};

struct ChipStats {
  uint64_t transfers_sent = 0;  // inter-chip and on-chip
  uint64_t transfers_received = 0;
  uint64_t bytes_sent = 0;  // payload
  uint64_t bytes_received = 0;
  uint64_t packets_injected = 0;
  uint64_t packets_forwarded = 0;  // accepted here on the way to another chip
  uint64_t packets_delivered = 0;  // accepted here as the destination (duplicates excluded)
  uint64_t duplicates = 0;         // discarded at reassembly
  uint64_t xoff_count = 0;         // XOFFs sent to a core because a queue was full
  int64_t xoff_ps = 0;             // time cores spent throttled by XOFF
};

struct FabricStats {
  std::vector<LinkStats> links;  // in Routing's link order
  std::vector<ChipStats> chips;
  int64_t end_ps = 0;      // time of the last event (acks included) of any drain so far
  uint64_t events = 0;     // simulation events processed (for host-speed figures)
  uint64_t packets = 0;    // transmissions, all links
  uint64_t transfers = 0;  // transfers delivered
  nlohmann::ordered_json to_json() const;
};

// How this rank spent host time in windowed drains (fabric/engine.h "Partitions", "Ranks"), for
// reports only (wall seconds, different from run to run): running its partitions' windows, and
// waiting for the other ranks' events and progress at the windows' ends.
struct FabricHostTime {
  uint64_t windows = 0;
  double busy_seconds = 0;
  double wait_seconds = 0;
};

}  // namespace tessera::fabric
