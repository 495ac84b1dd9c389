// The Adam unit's statistics as a report::StatGroup.
//
// Energy (core.adam.energy.*, pJ): elements through each vector sub-module times its per-element
// energy, basic-module operations, data-cache bytes, processing-module buffer bytes, decoded
// instructions, and the unit's HBM bytes at core.energy.hbm_byte_pj.
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
  g.set_int("micro_ops", s.micro_ops, "micro-ops", "DMA, data-cache and sub-module micro-operations");
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
  static constexpr const char* kSubName[kNumAdamSubs] = {"add", "mul", "div", "sqrt", "basic", "dcache", "dma"};
  report::StatGroup& sub = g.group("submodules");
  for (int u = 0; u < kNumAdamSubs; ++u) {
    report::StatGroup& k = sub.group(kSubName[u]);
    k.set_int("busy_cycles", s.busy[static_cast<size_t>(u)], "cycles");
    k.set_int("elements", s.elements[static_cast<size_t>(u)], "", "elements (bytes for dcache)");
    k.set("utilisation", s.busy_cycles > 0 ? static_cast<double>(s.busy[static_cast<size_t>(u)]) / static_cast<double>(s.busy_cycles) : 0.0);
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

  const AdamUnitSpec& p = m_spec;
  const auto el = [&](AdamSub u) { return static_cast<double>(s.elements[static_cast<size_t>(u)]); };
  struct Part {
    const char* name;
    double pj;
  };
  const Part parts[] = {
      {"add_pj", p.add_pj * el(AdamSub::Add)},
      {"mul_pj", p.mul_pj * el(AdamSub::Mul)},
      {"div_pj", p.div_pj * el(AdamSub::Div)},
      {"sqrt_pj", p.sqrt_pj * el(AdamSub::Sqrt)},
      {"basic_pj", p.basic_op_pj * el(AdamSub::Basic)},
      {"dcache_pj", p.dcache_byte_pj * static_cast<double>(s.dcache_read_bytes + s.dcache_write_bytes)},
      {"buffer_pj", p.buffer_byte_pj * static_cast<double>(s.buffer_bytes)},
      {"instr_pj", p.instr_pj * static_cast<double>(s.instructions)},
      {"hbm_pj", hbm_byte_pj * static_cast<double>(s.hbm_read_bytes() + s.hbm_write_bytes())},
  };
  double total = 0;
  for (const Part& q : parts) total += q.pj;
  report::StatGroup& en = g.group("energy");
  en.set("total_uj", total * 1e-6, "uJ");
  report::StatGroup& br = en.group("breakdown");
  for (const Part& q : parts) br.set(q.name, q.pj, "pJ");
}

}  // namespace tessera::core
