// Statistics of a run as a report::StatGroup (the same tree is printed and written as JSON).
//
// Energy: core/energy.h (the model as a function of event counts).
#include <fmt/format.h>

#include "core/core.h"
#include "core/energy.h"

namespace tessera::core {

void report_ops(const Machine& m, report::StatGroup& g) {
  report::StatGroup& ops = g.group("ops");
  for (int u = 1; u < isa::kNumUnits; ++u)
    ops.set_int(isa::to_string(static_cast<isa::Unit>(u)),
                m.events().unit_ops[static_cast<size_t>(u)], "ops");
}

void report_events(const Machine& m, int64_t cycles, report::StatGroup& g) {
  const EventCounts& ev = m.events();
  const CoreSpec& spec = m.spec();
  const double seconds = static_cast<double>(cycles) / spec.clock_hz;

  report::StatGroup& mem = g.group("memory");
  mem.set_int("smem_read_bytes", ev.smem_read_bytes, "B", "scalar memory bytes read (sld, DMA)");
  mem.set_int("smem_write_bytes", ev.smem_write_bytes, "B",
              "scalar memory bytes written (sst, DMA)");
  mem.set_int("vmem_read_bytes", ev.vmem_read_bytes, "B", "vector memory bytes read (vld, DMA)");
  mem.set_int("vmem_write_bytes", ev.vmem_write_bytes, "B",
              "vector memory bytes written (vst, DMA)");
  mem.set_int("hbm_read_bytes", ev.hbm_read_bytes, "B", "HBM bytes read by DMA");
  mem.set_int("hbm_write_bytes", ev.hbm_write_bytes, "B", "HBM bytes written by DMA");
  mem.set_int("dma_requests", ev.dma_requests, "requests");
  mem.set_int("dma_bytes", ev.dma_bytes, "B");
  mem.set("hbm_bandwidth_gbps",
          seconds > 0 ? static_cast<double>(ev.hbm_read_bytes + ev.hbm_write_bytes) / seconds / 1e9
                      : 0.0,
          "GB/s", "average HBM traffic over the run");

  const auto parts = energy_parts(spec, ev, MxuEnergyCounts::of(m.mxu_stats()), cycles);
  const double total = energy_total_pj(parts);
  report::StatGroup& en = g.group("energy");
  en.set("total_uj", total * 1e-6, "uJ", "total energy");
  en.set("average_power_w", seconds > 0 ? total * 1e-12 / seconds : 0.0, "W");
  report::StatGroup& br = en.group("breakdown");
  for (const EnergyPart& p : parts) br.set(p.name, p.pj, "pJ");
}

report::StatGroup Core::stats() const {
  report::StatGroup g;
  const double cycles = static_cast<double>(m_cycles);
  g.set_int("cycles", m_cycles, "cycles", "from the first issue to the end of the drain");
  g.set_int("bundles", m_bundles, "bundles");
  g.set("seconds", cycles / m_spec.clock_hz, "s", "simulated time at the core clock");
  g.set("bundles_per_cycle", cycles > 0 ? static_cast<double>(m_bundles) / cycles : 0.0);

  report::StatGroup& st = g.group("stalls");
  int64_t total = 0;
  for (int64_t c : m_stalls) total += c;
  st.set_int("total", total, "cycles");
  for (int c = 1; c < kNumStallCauses; ++c)
    st.set_int(to_string(static_cast<StallCause>(c)), m_stalls[static_cast<size_t>(c)], "cycles");

  report::StatGroup& units = g.group("units");
  for (int u = 1; u < isa::kNumUnits; ++u) {
    report::StatGroup& ug = units.group(isa::to_string(static_cast<isa::Unit>(u)));
    ug.set_int("ops", m_machine.events().unit_ops[static_cast<size_t>(u)], "ops");
    ug.set_int("busy_cycles", m_busy[static_cast<size_t>(u)], "cycles");
    ug.set("utilisation",
           cycles > 0 ? static_cast<double>(m_busy[static_cast<size_t>(u)]) / cycles : 0.0);
  }

  for (const auto& unit : m_machine.units()) unit->report(g, m_cycles);
  if (m_machine.sparse().stats().descriptors > 0)
    m_machine.sparse().report(g.group("sparse_core"), m_spec.energy.hbm_byte_pj);

  report_events(m_machine, m_cycles, g);
  return g;
}

}  // namespace tessera::core
