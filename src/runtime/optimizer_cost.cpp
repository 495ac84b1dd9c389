#include "runtime/optimizer_cost.h"

#include <bit>

#include "common/error.h"
#include "core/energy.h"
#include "isa/opcodes.h"

namespace tessera::runtime {

OptimizerCost& OptimizerCost::operator+=(const OptimizerCost& o) {
  steps += o.steps;
  cycles += o.cycles;
  hbm_read_bytes += o.hbm_read_bytes;
  hbm_write_bytes += o.hbm_write_bytes;
  energy_uj += o.energy_uj;
  unit_energy_uj += o.unit_energy_uj;
  return *this;
}

OptimizerCounters optimizer_counters(const core::Core& c) {
  OptimizerCounters k;
  k.cycles = c.cycles();
  k.mxu = core::MxuEnergyCounts::of(c.machine().mxu().stats());
  k.events = c.machine().events();
  k.unit = c.machine().adam().stats();
  return k;
}

OptimizerCost optimizer_cost_between(const core::Core& c, const OptimizerCounters& before,
                                     const OptimizerCounters& after) {
  const core::EventCounts ev = after.events - before.events;
  const core::AdamUnitStats unit = after.unit - before.unit;
  const core::CoreSpec& spec = c.spec();
  OptimizerCost d;
  d.steps = 1;
  d.cycles = after.cycles - before.cycles;
  d.hbm_read_bytes = ev.hbm_read_bytes + unit.hbm_read_bytes();
  d.hbm_write_bytes = ev.hbm_write_bytes + unit.hbm_write_bytes();
  const double core_pj =
      core::energy_total_pj(core::energy_parts(spec, ev, after.mxu - before.mxu, d.cycles));
  const double unit_pj = core::adam_unit_energy(spec.adam, unit, spec.energy.hbm_byte_pj).total;
  d.unit_energy_uj = unit_pj * 1e-6;
  d.energy_uj = (core_pj + unit_pj) * 1e-6;
  return d;
}

OptimizerCost sum_costs(const std::vector<OptimizerCost>& steps) {
  OptimizerCost sum;
  for (const OptimizerCost& s : steps) sum += s;
  return sum;
}

nlohmann::ordered_json optimizer_json(const std::vector<OptimizerCost>& per_step,
                                      int64_t total_cycles) {
  const OptimizerCost sum = sum_costs(per_step);
  const double steps = sum.steps > 0 ? static_cast<double>(sum.steps) : 1.0;
  nlohmann::ordered_json j;
  j["steps"] = sum.steps;
  j["cycles"] = sum.cycles;
  j["cycles_per_step"] = static_cast<double>(sum.cycles) / steps;
  j["cycle_share"] =
      total_cycles > 0 ? static_cast<double>(sum.cycles) / static_cast<double>(total_cycles) : 0.0;
  j["hbm_read_bytes"] = sum.hbm_read_bytes;
  j["hbm_write_bytes"] = sum.hbm_write_bytes;
  j["hbm_bytes_per_step"] = static_cast<double>(sum.hbm_bytes()) / steps;
  j["energy_uj"] = sum.energy_uj;
  j["energy_uj_per_step"] = sum.energy_uj / steps;
  j["unit_energy_uj"] = sum.unit_energy_uj;
  nlohmann::ordered_json cycles = nlohmann::ordered_json::array(), bytes = cycles, energy = cycles;
  for (const OptimizerCost& s : per_step) {
    cycles.push_back(s.cycles);
    bytes.push_back(s.hbm_bytes());
    energy.push_back(s.energy_uj);
  }
  j["per_step"] = {{"cycles", cycles}, {"hbm_bytes", bytes}, {"energy_uj", energy}};
  return j;
}

// Each step as [steps, cycles, hbm_read_bytes, hbm_write_bytes, energy_uj bits, unit_energy_uj
// bits].
nlohmann::ordered_json costs_to_json(const std::vector<OptimizerCost>& steps) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const OptimizerCost& s : steps)
    j.push_back({s.steps, s.cycles, s.hbm_read_bytes, s.hbm_write_bytes,
                 std::bit_cast<uint64_t>(s.energy_uj), std::bit_cast<uint64_t>(s.unit_energy_uj)});
  return j;
}

std::vector<OptimizerCost> costs_from_json(const nlohmann::ordered_json& j,
                                           const std::string& path) {
  const auto bad = [&] {
    return Error(path, "corrupt checkpoint progress (optimizer per-step costs)");
  };
  if (!j.is_array()) throw bad();
  std::vector<OptimizerCost> out;
  for (const nlohmann::ordered_json& e : j) {
    if (!e.is_array() || e.size() != 6) throw bad();
    for (const nlohmann::ordered_json& v : e)
      if (!v.is_number_integer()) throw bad();
    OptimizerCost c;
    c.steps = e[0].get<int64_t>();
    c.cycles = e[1].get<int64_t>();
    c.hbm_read_bytes = e[2].get<int64_t>();
    c.hbm_write_bytes = e[3].get<int64_t>();
    c.energy_uj = std::bit_cast<double>(e[4].get<uint64_t>());
    c.unit_energy_uj = std::bit_cast<double>(e[5].get<uint64_t>());
    out.push_back(c);
  }
  return out;
}

namespace {

bool is_branch(isa::Opcode op) {
  return op != isa::Opcode::HALT && isa::op_info(op).latency == isa::LatencyClass::Branch;
}

}  // namespace

StepParts split_step(const compiler::CompiledProgram& p) {
  const int64_t first = p.optimizer_first_bundle;
  const int64_t size = static_cast<int64_t>(p.program.code.size());
  if (first < 0 || first >= size)
    throw Error("train", "the compiled step has no optimizer section");
  StepParts s;
  s.main.code.assign(p.program.code.begin(), p.program.code.begin() + first);
  s.update.code.assign(p.program.code.begin() + first, p.program.code.end());
  for (int64_t i = 0; i < size; ++i)
    for (const isa::Instr& in : p.program.code[static_cast<size_t>(i)].slot)
      if (is_branch(in.op) && (i < first) != (in.imm < first))
        throw Error("train", "a branch crosses the optimizer section of the compiled step");
  TESSERA_CHECK(s.update.code.back().slot[0].op == isa::Opcode::HALT,
                "compiled step ends with halt");
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
