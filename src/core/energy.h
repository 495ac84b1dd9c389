// The core's energy model as a function of event counts, so that a caller holding counts (a whole
// run, or the sum of per-step differences of a training epoch) gets the same figure as the core's
// statistics.
//
// Energy (CoreSpec.energy, pJ per event): MACs (MXU), vector ALU element ops, scalar ops, vreg
// element accesses (reads + writes of vector/mask registers), bytes of vector memory, scalar
// memory and HBM traffic, elements through the extended units, bundles fetched, plus static power
// over `cycles` at the core clock. The per-event energies and their sources are in the config
// (configs/tpu-v2-like.json cites them; estimates are marked there). The total is the sum of the
// parts in the order energy_parts lists them.
#pragma once

#include <array>
#include <cstdint>

#include "core/events.h"
#include "core/spec.h"

namespace tessera::core {

struct EnergyPart {
  const char* name;  // "<part>_pj"
  double pj;
};

inline constexpr int kNumEnergyParts = 10;

std::array<EnergyPart, kNumEnergyParts> energy_parts(const CoreSpec& spec, const EventCounts& ev, int64_t macs,
                                                     int64_t cycles);
double energy_total_pj(const std::array<EnergyPart, kNumEnergyParts>& parts);

}  // namespace tessera::core
