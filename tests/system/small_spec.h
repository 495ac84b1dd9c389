// A core small enough that tests build dozens of processors quickly (the collectives touch only
// vector memory): 64 KiB vmem, 1 MiB HBM, 8 accumulator blocks; and a small ring of them.
#pragma once

#include "core/spec.h"
#include "system/system_spec.h"

namespace tessera::system {

inline core::CoreSpec small_spec() {
  core::CoreSpec s;
  s.vmem_bytes = 64 << 10;
  s.hbm_bytes = 1 << 20;
  s.mxu_acc_blocks = 8;
  return s;
}

// `chips` chips of `cores` cores on a ring (a line for 2 chips or fewer), 64-byte packets.
inline SystemSpec small_ring(int chips, int cores) {
  SystemSpec s;
  s.chips = chips;
  s.chips_per_board = chips;
  s.cores_per_chip = cores;
  s.topology = chips > 2 ? Topology::kRing : Topology::kLine;
  s.packet_payload_bytes = 64;
  return s;
}

}  // namespace tessera::system
