// The flags of the all-reduce benchmarks (bench allreduce, bench fabric) that describe the
// exchange: how many chips, how they are linked, how many bytes each all-reduces and in how many
// directions round the ring.
#pragma once

#include <cstdint>
#include <string>

#include "system/system_spec.h"

namespace CLI {
class App;
}

namespace tessera::bench {

struct ExchangeFlags {
  int chips = 8;
  std::string topology = "ring";  // line, ring or torus2d
  uint64_t bytes = 64ull << 20;
  int directions = 2;
};

// --chips, --topology, --bytes, --directions.
void add_exchange_flags(CLI::App& cmd, ExchangeFlags& f);

// UsageError unless --bytes is a positive multiple of 4 of at most 4 GiB.
void check_exchange_bytes(uint64_t bytes);

// Sets s.topology from `name` (line, ring, torus2d) for s.chips chips; torus2d's dims are the
// factorisation of s.chips closest to a square (dims_y <= dims_x).
void set_topology(system::SystemSpec& s, const std::string& name);

}  // namespace tessera::bench
