// One Adam step, t = 1, on n parameters (theta, g ~ N(0, 1) from mt19937(7); default
// hyperparameters): on the Adam unit started by the tensor core (adam.start + wait; the step's
// cost is the init+step run minus the init-only run) and on the vector unit
// (compiler::adam_vector_step_program, m and v in HBM). Both results are compared with
// numerics::adamw_reference_step bit for bit. Bytes are HBM bytes (unit: its DMA path; vector unit:
// the core's DMA); energy as each reports.
#pragma once

#include <cstdint>
#include <string>

#include "core/spec.h"

namespace tessera::bench {

struct AdamStepCost {
  int64_t cycles = 0, bytes = 0;
  double energy_uj = 0;
};

struct AdamBenchRow {
  int64_t n = 0;
  AdamStepCost unit, vector_unit;
  bool unit_bit_identical = false, vector_bit_identical = false;
  double bytes_ratio() const {
    return static_cast<double>(unit.bytes) / static_cast<double>(vector_unit.bytes);
  }
  double cycles_ratio() const {
    return static_cast<double>(unit.cycles) / static_cast<double>(vector_unit.cycles);
  }
};

AdamBenchRow adam_bench_step(const core::CoreSpec& spec, int64_t n);

}  // namespace tessera::bench
