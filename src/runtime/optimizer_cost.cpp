#include "runtime/optimizer_cost.h"

#include "common/error.h"
#include "isa/opcodes.h"

namespace tessera::runtime {

OptimizerCost& OptimizerCost::operator+=(const OptimizerCost& o) {
  steps += o.steps;
  cycles += o.cycles;
  hbm_read_bytes += o.hbm_read_bytes;
  hbm_write_bytes += o.hbm_write_bytes;
  energy_uj += o.energy_uj;
  return *this;
}

OptimizerCost operator-(const OptimizerCost& b, const OptimizerCost& a) {
  OptimizerCost d;
  d.steps = b.steps - a.steps;
  d.cycles = b.cycles - a.cycles;
  d.hbm_read_bytes = b.hbm_read_bytes - a.hbm_read_bytes;
  d.hbm_write_bytes = b.hbm_write_bytes - a.hbm_write_bytes;
  d.energy_uj = b.energy_uj - a.energy_uj;
  return d;
}

OptimizerCost optimizer_counters(const core::Core& c) {
  OptimizerCost k;
  k.cycles = c.cycles();
  const core::EventCounts& ev = c.machine().events();
  const core::AdamUnit& unit = c.machine().adam();
  k.hbm_read_bytes = ev.hbm_read_bytes + unit.stats().hbm_read_bytes();
  k.hbm_write_bytes = ev.hbm_write_bytes + unit.stats().hbm_write_bytes();
  report::StatGroup ug;
  unit.report(ug, c.spec().energy.hbm_byte_pj);
  k.energy_uj = c.stats().get("energy.total_uj") + ug.get("energy.total_uj");
  return k;
}

nlohmann::ordered_json optimizer_json(const OptimizerCost& sum, int64_t total_cycles) {
  const double steps = sum.steps > 0 ? static_cast<double>(sum.steps) : 1.0;
  nlohmann::ordered_json j;
  j["steps"] = sum.steps;
  j["cycles"] = sum.cycles;
  j["cycles_per_step"] = static_cast<double>(sum.cycles) / steps;
  j["cycle_share"] = total_cycles > 0 ? static_cast<double>(sum.cycles) / static_cast<double>(total_cycles) : 0.0;
  j["hbm_read_bytes"] = sum.hbm_read_bytes;
  j["hbm_write_bytes"] = sum.hbm_write_bytes;
  j["hbm_bytes_per_step"] = static_cast<double>(sum.hbm_bytes()) / steps;
  j["energy_uj"] = sum.energy_uj;
  j["energy_uj_per_step"] = sum.energy_uj / steps;
  return j;
}

namespace {

bool is_branch(isa::Opcode op) {
  return op != isa::Opcode::HALT && isa::op_info(op).latency == isa::LatencyClass::Branch;
}

}  // namespace

StepParts split_step(const compiler::CompiledProgram& p) {
  const int64_t first = p.optimizer_first_bundle;
  const int64_t size = static_cast<int64_t>(p.program.code.size());
  if (first < 0 || first >= size) throw Error("train", "the compiled step has no optimizer section");
  StepParts s;
  s.main.code.assign(p.program.code.begin(), p.program.code.begin() + first);
  s.update.code.assign(p.program.code.begin() + first, p.program.code.end());
  for (int64_t i = 0; i < size; ++i)
    for (const isa::Instr& in : p.program.code[static_cast<size_t>(i)].slot)
      if (is_branch(in.op) && (i < first) != (in.imm < first))
        throw Error("train", "a branch crosses the optimizer section of the compiled step");
  TESSERA_CHECK(s.update.code.back().slot[0].op == isa::Opcode::HALT, "compiled step ends with halt");
  for (isa::Bundle& b : s.update.code)
    for (isa::Instr& in : b.slot)
      if (is_branch(in.op)) in.imm -= static_cast<int32_t>(first);
  isa::Bundle halt;
  halt.slot[0].op = isa::Opcode::HALT;
  s.main.code.push_back(halt);
  s.main.data = p.program.data;
  s.update.data = p.program.data;
  return s;
}

}  // namespace tessera::runtime
