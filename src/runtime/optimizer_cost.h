// The optimizer update's share of a training step on the chip.
//
// ChipTrainer runs a compiled step as two programs on the same core, back to back: the bundles
// before CompiledProgram::optimizer_first_bundle (forward, loss, backward; every gradient is in
// HBM and no DMA is in flight there: a barrier) and the optimizer section after it. Values are
// those of the one program; the split only adds the first part's drain (a halt bundle and the
// last register latencies, a few cycles). The optimizer's cost is the difference of the counters
// around the second program:
//   cycles           core cycles of the optimizer section (on the unit: adam.start, the unit's run
//                    while the core waits on the flag, the wait);
//   hbm bytes        the core's DMA bytes (vector unit: theta, g, m, v in; theta, m, v out; the
//                    per-step scalars) plus the Adam unit's HBM bytes (instructions, theta, g in,
//                    theta out; m, v only for blocks spilled out of its data cache);
//   energy           the core's energy model over the section (core/energy: dynamic events plus
//                    static power for its cycles) plus the unit's (core.adam.energy.*: elements per
//                    sub-module, basic ops, data-cache and buffer bytes, decoded instructions, its
//                    HBM bytes at core.energy.hbm_byte_pj).
//   unit energy      the Adam unit's part of that energy alone. The unit runs only inside the
//                    optimizer section, so an epoch's chip energy is the core's energy over the
//                    steps' events plus the sum of this over the steps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/compiler.h"
#include "core/core.h"
#include "core/energy.h"

namespace tessera::runtime {

struct OptimizerCost {
  int64_t steps = 0, cycles = 0, hbm_read_bytes = 0, hbm_write_bytes = 0;
  double energy_uj = 0;
  double unit_energy_uj = 0;
  int64_t hbm_bytes() const { return hbm_read_bytes + hbm_write_bytes; }
  OptimizerCost& operator+=(const OptimizerCost& o);
};
// The cumulative integer counters of a core and its Adam unit that a cost is computed from.
struct OptimizerCounters {
  int64_t cycles = 0;
  core::MxuEnergyCounts mxu;
  core::EventCounts events;
  core::AdamUnitStats unit;
};
OptimizerCounters optimizer_counters(const core::Core& c);

// The cost of one section of a run on core `c` (steps = 1) from the counters around it. Energies
// come from the integer differences (core/energy.h, core/adam_unit.h), never from differences of
// cumulative floating-point totals, so a section costs the same bits whatever ran before it (a
// resumed run reports what an uninterrupted one does).
OptimizerCost optimizer_cost_between(const core::Core& c, const OptimizerCounters& before,
                                     const OptimizerCounters& after);

// The steps' costs summed in step order.
OptimizerCost sum_costs(const std::vector<OptimizerCost>& steps);

// An epoch's (or any run of steps') optimizer figures as JSON: steps, cycles, cycles_per_step,
// cycle_share (of `total_cycles`, the steps' cycles), hbm_read_bytes, hbm_write_bytes,
// hbm_bytes_per_step, energy_uj, energy_uj_per_step, unit_energy_uj, and "per_step": one array
// per figure (cycles, hbm_bytes, energy_uj), element i for the i-th step.
nlohmann::ordered_json optimizer_json(const std::vector<OptimizerCost>& steps,
                                      int64_t total_cycles);

// The per-step costs as checkpoint progress (columns; energies as IEEE-754 bits so a resumed
// epoch sums exactly the same values) and back. Throws Error naming `path` on a malformed entry.
nlohmann::ordered_json costs_to_json(const std::vector<OptimizerCost>& steps);
std::vector<OptimizerCost> costs_from_json(const nlohmann::ordered_json& j,
                                           const std::string& path);

// A compiled training step as its two parts (both carry all of the step's data segments).
struct StepParts {
  isa::Program main, update;
};
// Throws tessera::Error if the program has no optimizer section or a branch crosses the split.
StepParts split_step(const compiler::CompiledProgram& p);

}  // namespace tessera::runtime
