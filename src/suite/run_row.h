// Running one suite row on ONE core of the simulated chip:
//   1. the row's graph (suite/workload_graph.h) with seeded random inputs: one SplitMix64(seed)
//      stream over the inputs in graph order, element i of each = f32(2 * unit() - 1);
//   2. its program (suite/row_program.h) with the inputs as HBM data segments, on a timed Core
//      (host_setup_seconds: building the program and the Core);
//   3. Core::run, timed (host_seconds);
//   4. the check: the result read from the simulated HBM against the host reference executor
//      (graph/executor.h) in chip numerics on the same inputs, bit for bit (the reference defines
//      the chip's arithmetic of every op of the rows exactly: numerics::mxu_matmul_accumulate on
//      bf16-rounded operands, k ascending, for the matrix products; the tree sums and maxima of
//      the reduce unit and the EUP's functions for layer_norm and softmax). A difference is an
//      Error naming the row, the element and both values;
//   5. the fp32 reference executor (OpenBLAS single-threaded matmuls) on the same inputs, its
//      run() timed (ref_host_seconds).
// Host seconds come from `clock` (the CPU seconds of one call of its argument), so the caller
// decides how time is measured.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/spec.h"
#include "suite/bound.h"
#include "suite/row.h"

namespace tessera::suite {

using HostClock = std::function<double(const std::function<void()>&)>;

struct RowResult {
  std::string name;
  std::optional<std::string> unsupported;  // why the row cannot run yet; nothing else is set
  int64_t cycles = 0;
  Workload work;
  Bound bound;
  double cycles_over_bound = 0;  // cycles / bound.cycles (0 for no work)
  double mxu_utilization = 0;    // work.macs / (mxu_count * R * C * cycles)
  int64_t sim_hbm_bytes = 0;     // bytes the program's DMAs read from and wrote to HBM
  std::vector<std::pair<std::string, int64_t>> stalls;  // non-zero causes, largest first
  double host_seconds = 0, host_setup_seconds = 0, ref_host_seconds = 0;
  std::string check;  // what was compared, and how
};

// An unsupported row (suite/workload_graph.h), or one whose program does not fit the core, is a
// result with `unsupported` set.
RowResult run_row(const Row& row, const core::CoreSpec& spec, uint64_t seed,
                  const HostClock& clock);

}  // namespace tessera::suite
