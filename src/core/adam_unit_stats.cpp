// The Adam unit's statistics as a report::StatGroup.
//
// Energy: adam_unit_energy (adam_unit.h) over the unit's counts.
#include <algorithm>
#include <string>

#include "core/adam_unit.h"

namespace tessera::core {

void AdamUnit::report(report::StatGroup& g, double hbm_byte_pj) const {
  const AdamUnitStats& s = m_stats;
  g.set_int("runs", s.runs, "runs", "adam.start runs");
  g.set_int("steps", s.steps, "steps", "MOMENT_ESTIMATE instructions (Adam steps)");
  g.set_int("t", m_t, "", "current step count");
  g.set_int("instructions", s.instructions, "instructions");
  g.set_int("micro_ops", s.micro_ops, "micro-ops",
            "DMA, data-cache and sub-module micro-operations");
  g.set_int("busy_cycles", s.busy_cycles, "cycles", "start to halt, summed over runs");
  g.set("temp2", static_cast<double>(m_temp2), "", "last convergence mean");
  report::StatGroup& ins = g.group("instructions_by_kind");
  for (const isa::AdamOpInfo& info : isa::kAdamOpTable) {
    const auto i = static_cast<size_t>(info.op);
    if (s.count[i] == 0) continue;
    std::string name(info.mnemonic);
    std::replace(name.begin(), name.end(), '.', '_');  // stat names have no dots: xfer_in
    report::StatGroup& k = ins.group(name);
    k.set_int("count", s.count[i]);
    k.set_int("cycles", s.cycles[i], "cycles", "sum over instances of (done - issue)");
  }
  static constexpr const char* kSubName[kNumAdamSubs] = {"add",   "mul",    "div", "sqrt",
                                                         "basic", "dcache", "dma"};
  report::StatGroup& sub = g.group("submodules");
  for (int u = 0; u < kNumAdamSubs; ++u) {
    report::StatGroup& k = sub.group(kSubName[u]);
    k.set_int("busy_cycles", s.busy[static_cast<size_t>(u)], "cycles");
    k.set_int("elements", s.elements[static_cast<size_t>(u)], "", "elements (bytes for dcache)");
    k.set("utilisation", s.busy_cycles > 0 ? static_cast<double>(s.busy[static_cast<size_t>(u)]) /
                                                 static_cast<double>(s.busy_cycles)
                                           : 0.0);
  }
  report::StatGroup& io = g.group("io");
  io.set_int("hbm_read_bytes", s.hbm_read_bytes(), "B");
  io.set_int("hbm_write_bytes", s.hbm_write_bytes(), "B");
  io.set_int("instr_bytes", s.instr_bytes, "B", "INSTRUCTION_IO (and the bootstrap word)");
  io.set_int("hyper_bytes", s.hyper_bytes, "B");
  io.set_int("theta_in_bytes", s.theta_in_bytes, "B");
  io.set_int("g_in_bytes", s.g_in_bytes, "B");
  io.set_int("theta_out_bytes", s.theta_out_bytes, "B");
  io.set_int("spill_in_bytes", s.spill_in_bytes, "B", "m, v of spilled blocks read from HBM");
  io.set_int("spill_out_bytes", s.spill_out_bytes, "B", "m, v of spilled blocks written to HBM");
  io.set_int("dcache_read_bytes", s.dcache_read_bytes, "B");
  io.set_int("dcache_write_bytes", s.dcache_write_bytes, "B");
  io.set_int("resident_blocks", m_resident_blocks, "blocks");
  io.set_int("blocks", m_blocks, "blocks");

  adam_unit_energy(m_spec, s, hbm_byte_pj).report(g);
}

AdamUnitEnergy adam_unit_energy(const AdamUnitSpec& p, const AdamUnitStats& s, double hbm_byte_pj) {
  const auto el = [&](AdamSub u) {
    return static_cast<double>(s.elements[static_cast<size_t>(u)]);
  };
  AdamUnitEnergy e;
  e.names = {"add_pj",    "mul_pj",    "div_pj",   "sqrt_pj", "basic_pj",
             "dcache_pj", "buffer_pj", "instr_pj", "hbm_pj"};
  e.pj = {p.add_pj * el(AdamSub::Add),
          p.mul_pj * el(AdamSub::Mul),
          p.div_pj * el(AdamSub::Div),
          p.sqrt_pj * el(AdamSub::Sqrt),
          p.basic_op_pj * el(AdamSub::Basic),
          p.dcache_byte_pj * static_cast<double>(s.dcache_read_bytes + s.dcache_write_bytes),
          p.buffer_byte_pj * static_cast<double>(s.buffer_bytes),
          p.instr_pj * static_cast<double>(s.instructions),
          hbm_byte_pj * static_cast<double>(s.hbm_read_bytes() + s.hbm_write_bytes())};
  e.add_up();
  return e;
}

AdamUnitStats operator-(const AdamUnitStats& a, const AdamUnitStats& b) {
  const auto sub = [](auto x, const auto& y) {
    for (size_t i = 0; i < x.size(); ++i) x[i] -= y[i];
    return x;
  };
  AdamUnitStats d;
  d.runs = a.runs - b.runs;
  d.instructions = a.instructions - b.instructions;
  d.micro_ops = a.micro_ops - b.micro_ops;
  d.steps = a.steps - b.steps;
  d.count = sub(a.count, b.count);
  d.cycles = sub(a.cycles, b.cycles);
  d.busy = sub(a.busy, b.busy);
  d.elements = sub(a.elements, b.elements);
  d.busy_cycles = a.busy_cycles - b.busy_cycles;
  d.instr_bytes = a.instr_bytes - b.instr_bytes;
  d.hyper_bytes = a.hyper_bytes - b.hyper_bytes;
  d.theta_in_bytes = a.theta_in_bytes - b.theta_in_bytes;
  d.g_in_bytes = a.g_in_bytes - b.g_in_bytes;
  d.theta_out_bytes = a.theta_out_bytes - b.theta_out_bytes;
  d.spill_in_bytes = a.spill_in_bytes - b.spill_in_bytes;
  d.spill_out_bytes = a.spill_out_bytes - b.spill_out_bytes;
  d.dcache_read_bytes = a.dcache_read_bytes - b.dcache_read_bytes;
  d.dcache_write_bytes = a.dcache_write_bytes - b.dcache_write_bytes;
  d.buffer_bytes = a.buffer_bytes - b.buffer_bytes;
  return d;
}

}  // namespace tessera::core
