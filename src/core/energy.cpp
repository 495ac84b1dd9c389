#include "core/energy.h"

#include <fmt/format.h>

namespace tessera::core {

double mxu_energy_pj(const CoreSpec& spec, const MxuEnergyCounts& mxu) {
  if (spec.mxu_pe == MxuPe::TermSerial)
    return spec.term.term_pj * static_cast<double>(mxu.terms_processed) +
           spec.term.step_pj * static_cast<double>(mxu.pe_steps);
  return spec.energy.mac_pj * static_cast<double>(mxu.macs);
}

std::string mxu_energy_source(const CoreSpec& spec) {
  if (spec.mxu_pe == MxuPe::TermSerial)
    return fmt::format(
        "term-serial: core.mxu.term.term_pj {} pJ x terms processed + core.mxu.term.step_pj {} pJ "
        "x PE steps "
        "(source: {})",
        spec.term.term_pj, spec.term.step_pj, spec.energy.term_source);
  return fmt::format("bit-parallel: core.energy.mac_pj {} pJ x MACs", spec.energy.mac_pj);
}

namespace {

// The energy of one part: its figure (EnergySpec) times the events it prices.
double part_pj(EnergyPartId part, const CoreSpec& spec, const EventCounts& ev,
               const MxuEnergyCounts& mxu, double seconds) {
  const EnergySpec& e = spec.energy;
  switch (part) {
    case EnergyPartId::Mxu:
      return mxu_energy_pj(spec, mxu);
    case EnergyPartId::Vector:
      return e.vector_op_pj * static_cast<double>(ev.vector_elements);
    case EnergyPartId::Scalar:
      return e.scalar_op_pj * static_cast<double>(ev.scalar_ops);
    case EnergyPartId::Vreg:
      return e.vreg_access_pj * static_cast<double>(ev.vreg_elements);
    case EnergyPartId::Vmem:
      return e.vmem_byte_pj * static_cast<double>(ev.vmem_read_bytes + ev.vmem_write_bytes);
    case EnergyPartId::Smem:
      return e.smem_byte_pj * static_cast<double>(ev.smem_read_bytes + ev.smem_write_bytes);
    case EnergyPartId::Hbm:
      return e.hbm_byte_pj * static_cast<double>(ev.hbm_read_bytes + ev.hbm_write_bytes);
    case EnergyPartId::Ext:
      return e.ext_op_pj * static_cast<double>(ev.ext_elements);
    case EnergyPartId::Fetch:
      return e.bundle_fetch_pj * static_cast<double>(ev.bundles);
    case EnergyPartId::Static:
      return e.static_mw * 1e-3 * seconds * 1e12;
  }
  return 0;
}

}  // namespace

std::array<EnergyPart, kNumEnergyParts> energy_parts(const CoreSpec& spec, const EventCounts& ev,
                                                     const MxuEnergyCounts& mxu, int64_t cycles) {
  static constexpr const char* kNames[kNumEnergyParts] = {
#define X(e, part, field, def, max, unit, what) part,
#include "core/energy_parts.def"
#undef X
  };
  const double seconds = static_cast<double>(cycles) / spec.clock_hz;
  std::array<EnergyPart, kNumEnergyParts> parts;
  for (int i = 0; i < kNumEnergyParts; ++i)
    parts[static_cast<size_t>(i)] = {kNames[i],
                                     part_pj(static_cast<EnergyPartId>(i), spec, ev, mxu, seconds)};
  return parts;
}

double energy_total_pj(const std::array<EnergyPart, kNumEnergyParts>& parts) {
  double total = 0;
  for (const EnergyPart& p : parts) total += p.pj;
  return total;
}

}  // namespace tessera::core
