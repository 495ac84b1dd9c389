// The core's energy model as a function of event counts, so that a caller holding counts (a whole
// run, or the sum of per-step differences of a training epoch) gets the same figure as the core's
// statistics.
//
// Energy (CoreSpec.energy, pJ per event; the parts are the rows of energy_parts.def): the MXU
// (mxu_energy_pj: the PE that ran), vector ALU element ops, scalar ops, vreg element accesses
// (reads + writes of vector/mask registers), bytes of vector memory, scalar memory and HBM
// traffic, elements through the extended units, bundles fetched, plus static power over `cycles`
// at the core clock. The per-event energies and their sources are in the config
// (configs/tpu-v2-like.json cites them; estimates are marked there). The total is the sum of the
// parts in the order energy_parts lists them.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "core/events.h"
#include "core/mxu.h"
#include "core/spec.h"

namespace tessera::core {

// The matrix unit's work as the energy model counts it (integer counters: differences add up).
struct MxuEnergyCounts {
  int64_t macs = 0, terms_processed = 0, pe_steps = 0;
  static MxuEnergyCounts of(const MxuStats& s) {
    return {s.macs, s.term.terms_processed, s.term.pe_steps};
  }
  friend MxuEnergyCounts operator-(const MxuEnergyCounts& a, const MxuEnergyCounts& b) {
    return {a.macs - b.macs, a.terms_processed - b.terms_processed, a.pe_steps - b.pe_steps};
  }
};

// The MXU's energy with the configured PE (core.mxu.pe): bit-parallel bf16 PEs
// core.energy.mac_pj x MACs; term-serial PEs core.mxu.term.term_pj x terms processed +
// core.mxu.term.step_pj x PE steps (the per-term figures' source: core.mxu.term.energy_source).
double mxu_energy_pj(const CoreSpec& spec, const MxuEnergyCounts& mxu);
// The formula mxu_energy_pj applies, with its figures and their stated source, for reports.
std::string mxu_energy_source(const CoreSpec& spec);

struct EnergyPart {
  const char* name;  // "<part>_pj"
  double pj;
};

enum class EnergyPartId : uint8_t {
#define X(e, part, field, def, max, unit, what) e,
#include "core/energy_parts.def"
#undef X
};
inline constexpr int kNumEnergyParts = 0
#define X(e, part, field, def, max, unit, what) +1
#include "core/energy_parts.def"
#undef X
    ;

std::array<EnergyPart, kNumEnergyParts> energy_parts(const CoreSpec& spec, const EventCounts& ev,
                                                     const MxuEnergyCounts& mxu, int64_t cycles);
double energy_total_pj(const std::array<EnergyPart, kNumEnergyParts>& parts);

}  // namespace tessera::core
