// FabricSpec: what the packet fabric needs to know about the machine — chips and cores per chip,
// the inter-chip topology and its links, the exchange protocol's packets and queues, and the
// on-chip path between the cores of one chip. Plain values, filled in by whoever describes the
// machine (its configuration is read under the "system.*" keys, hence the rules' key names below).
//
// Topologies (chips are numbered 0..chips-1):
//   line     chip i <-> i+1 (a forward and a backward link between neighbours)
//   ring     line plus chips-1 <-> 0 (the spec's 1-D torus; a board of 4 chips is a ring)
//   torus2d  dims_x x dims_y chips, chip = y * dims_x + x; x +-1 and y +-1 neighbours with wrap
//            (a dimension of size 2 has one link between its two chips, not two)
// Each link is full duplex (both directions at full bandwidth at once) or half duplex (one wire:
// one direction at a time, each transmission holds the wire for its serialisation time).
// failed_links removes links to study degraded machines; routing then uses shortest paths around
// the hole, and a chip left unreachable is a configuration error.
// Units are the ones engineers quote (GB/s, ns); the fabric works in integer picoseconds (Picos),
// converted by ns_to_ps and transfer_ps.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera::fabric {

using Picos = int64_t;  // simulated time, picoseconds (integers: deterministic)

enum class Topology : uint8_t { kLine, kRing, kTorus2d };
enum class Duplex : uint8_t { kHalf, kFull };

const char* topology_name(Topology t);
const char* duplex_name(Duplex d);

struct FabricSpec {
  int chips = 1;
  int cores_per_chip = 1;
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
  int packet_header_bytes = 32;     // header bytes on the wire per packet
  int queue_packets = 128;          // per output link: packets queued or awaiting their ack
  double ack_timeout_ns = 2000;     // retransmit a packet not acknowledged this long after it left
  double watchdog_us = 10000;       // simulated time without progress before the fabric gives up

  // the on-chip (core <-> core of one chip) time-deterministic path
  double onchip_gbytes_per_s = 256;
  double onchip_latency_ns = 50;

  // True when chips a and b are neighbours in the topology (failed links included).
  bool adjacent(int a, int b) const;
  // True when chips a and b are joined by a (working) link.
  bool linked(int a, int b) const;
};

// The spec's consistency rules, in order: require(ok, key, why) is called once per rule, with
// `key` naming the setting under the config section that holds it ("torus.dims_x", "topology",
// "packet.payload_bytes", "link.ack_timeout_ns", "failed_links").
using SpecRequire = std::function<void(bool ok, std::string_view key, const std::string& why)>;
void check_fabric_spec(const FabricSpec& spec, const SpecRequire& require);
// check_fabric_spec, throwing tessera::Error ("fabric spec: key '<key>'") at the first rule broken.
void validate_fabric_spec(const FabricSpec& spec);

// Time conversions (picoseconds, rounded to nearest).
Picos ns_to_ps(double ns);
// Serialisation time of `bytes` at `gbytes_per_s`: round(bytes * 1000 / gbytes_per_s) ps.
Picos transfer_ps(int64_t bytes, double gbytes_per_s);

}  // namespace tessera::fabric
