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

std::array<EnergyPart, kNumEnergyParts> energy_parts(const CoreSpec& spec, const EventCounts& ev,
                                                     const MxuEnergyCounts& mxu, int64_t cycles) {
  const EnergySpec& e = spec.energy;
  const double seconds = static_cast<double>(cycles) / spec.clock_hz;
  return {{
      {"mxu_pj", mxu_energy_pj(spec, mxu)},
      {"vector_pj", e.vector_op_pj * static_cast<double>(ev.vector_elements)},
      {"scalar_pj", e.scalar_op_pj * static_cast<double>(ev.scalar_ops)},
      {"vreg_pj", e.vreg_access_pj * static_cast<double>(ev.vreg_elements)},
      {"vmem_pj", e.vmem_byte_pj * static_cast<double>(ev.vmem_read_bytes + ev.vmem_write_bytes)},
      {"smem_pj", e.smem_byte_pj * static_cast<double>(ev.smem_read_bytes + ev.smem_write_bytes)},
      {"hbm_pj", e.hbm_byte_pj * static_cast<double>(ev.hbm_read_bytes + ev.hbm_write_bytes)},
      {"ext_pj", e.ext_op_pj * static_cast<double>(ev.ext_elements)},
      {"fetch_pj", e.bundle_fetch_pj * static_cast<double>(ev.bundles)},
      {"static_pj", e.static_mw * 1e-3 * seconds * 1e12},
  }};
}

double energy_total_pj(const std::array<EnergyPart, kNumEnergyParts>& parts) {
  double total = 0;
  for (const EnergyPart& p : parts) total += p.pj;
  return total;
}

}  // namespace tessera::core
