// SystemSpec: the machine above one core — chips, cores per chip, boards, the inter-chip topology
// and its links, the exchange protocol's queues, the barrier and the host link.
//
// Read with ConfigReader under "system.*" from the same JSON files as "core.*". Every key has a
// default that describes ONE chip with ONE core, so a config without a "system" object keeps its
// single-core meaning. Units in the file are the ones engineers quote (GB/s, ns); the simulator
// works in integer picoseconds (fabric::Picos), converted by the helpers below.
//
// Topologies (chips are numbered 0..chips-1):
//   line     chip i <-> i+1 (a forward and a backward link between neighbours)
//   ring     line plus chips-1 <-> 0 (the spec's 1-D torus; a board of 4 chips is a ring)
//   torus2d  dims_x x dims_y chips, chip = y * dims_x + x; x +-1 and y +-1 neighbours with wrap
//            (a dimension of size 2 has one link between its two chips, not two)
// Each link is full duplex (both directions at full bandwidth at once) or half duplex (one wire:
// one direction at a time, each transmission holds the wire for its serialisation time).
// system.failed_links removes links ("a-b,c-d") to study degraded machines; routing then uses
// shortest paths around the hole, and a chip left unreachable is a configuration error.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/config.h"

namespace tessera::system {

enum class Topology : uint8_t { kLine, kRing, kTorus2d };
enum class Duplex : uint8_t { kHalf, kFull };
// Where the hardware barrier sits in a superstep (spec/exchange.md's three variants).
enum class BarrierPlacement : uint8_t { kComputeToExchange, kExchangeToCompute, kBoth };

const char* topology_name(Topology t);
const char* duplex_name(Duplex d);
const char* barrier_placement_name(BarrierPlacement b);

struct SystemSpec {
  int chips = 1;
  int cores_per_chip = 1;
  int chips_per_board = 1;
  int boards = 1;  // chips == chips_per_board * boards
  Topology topology = Topology::kLine;
  int dims_x = 1;  // torus2d only: dims_x * dims_y == chips
  int dims_y = 1;
  std::vector<std::pair<int, int>> failed_links;  // (a, b) with a < b, each an existing link

  // inter-chip links (each direction of a full-duplex link has this bandwidth)
  double link_gbytes_per_s = 62;  // GB/s = 1e9 bytes per second
  double link_latency_ns = 500;   // wire + router latency, first bit out -> first bit in
  Duplex duplex = Duplex::kFull;
  double loss_rate = 0;             // probability that a packet is dropped on the wire
  int packet_payload_bytes = 1024;  // payload per packet (a multiple of 4: whole words)
  int packet_header_bytes = 32;     // header bytes on the wire per packet (fabric/packet.h)
  int queue_packets = 128;          // per output link: packets queued or awaiting their ack
  double ack_timeout_ns = 2000;     // retransmit a packet not acknowledged this long after it left
  double watchdog_us = 10000;       // simulated time without progress before the fabric gives up

  // barrier and the on-chip (core <-> core of one chip) time-deterministic path
  double barrier_latency_ns = 1000;
  BarrierPlacement barrier_placement = BarrierPlacement::kBoth;
  double onchip_gbytes_per_s = 256;
  double onchip_latency_ns = 50;

  // host link (host <-> each chip)
  double host_gbytes_per_s = 16;
  double host_latency_ns = 1000;

  int processors() const { return chips * cores_per_chip; }
  // True when chips a and b are joined by a (working) link.
  bool linked(int a, int b) const;
};

// Reads and validates; unknown keys are the caller's to reject with reader.finish().
SystemSpec read_system_spec(ConfigReader& reader);
// Validates a spec built in code (same checks and messages as the reader, where = "system").
void validate_system_spec(const SystemSpec& spec);
// The system section of a whole config file (system/machine_spec.h: both sections validated,
// unknown keys rejected); empty path: the built-in defaults.
SystemSpec load_system_spec(const std::string& path);

// Time conversions (picoseconds, rounded to nearest).
int64_t ns_to_ps(double ns);
// Serialisation time of `bytes` at `gbytes_per_s`: round(bytes * 1000 / gbytes_per_s) ps.
int64_t transfer_ps(int64_t bytes, double gbytes_per_s);

}  // namespace tessera::system
