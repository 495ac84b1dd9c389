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
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "compiler/compiler.h"
#include "core/core.h"

namespace tessera::runtime {

struct OptimizerCost {
  int64_t steps = 0, cycles = 0, hbm_read_bytes = 0, hbm_write_bytes = 0;
  double energy_uj = 0;
  int64_t hbm_bytes() const { return hbm_read_bytes + hbm_write_bytes; }
  OptimizerCost& operator+=(const OptimizerCost& o);
};
// b - a, field by field.
OptimizerCost operator-(const OptimizerCost& b, const OptimizerCost& a);

// The cumulative counters of a core (and its Adam unit) the cost is a difference of (steps = 0).
OptimizerCost optimizer_counters(const core::Core& c);

// An epoch's (or any run of steps') optimizer figures as JSON: steps, cycles, cycles_per_step,
// cycle_share (of `total_cycles`, the steps' cycles), hbm_read_bytes, hbm_write_bytes,
// hbm_bytes_per_step, energy_uj, energy_uj_per_step.
nlohmann::ordered_json optimizer_json(const OptimizerCost& sum, int64_t total_cycles);

// A compiled training step as its two parts (both carry all of the step's data segments).
struct StepParts {
  isa::Program main, update;
};
// Throws tessera::Error if the program has no optimizer section or a branch crosses the split.
StepParts split_step(const compiler::CompiledProgram& p);

}  // namespace tessera::runtime
