// The peak rates of one core as the suite's report states them, and the roofline bound of a
// suite row: core/roofline.h's, over the workload's intrinsic work (suite/workload_graph.h).
// The workload's figures are those of the computation, not of a program computing it: MACs of the
// matrix products, bytes of every input read once and every output written once (fp32), and the
// element operations that are not MACs.
#pragma once

#include "core/roofline.h"
#include "core/spec.h"

namespace tessera::suite {

// The peak rates of one core, read from its CoreSpec (the report's "core" object).
struct CoreFigures {
  double clock_hz = 0;
  int mxu_count = 0, mxu_rows = 0, mxu_cols = 0;
  int lanes = 0, sublanes = 0;
  double hbm_bytes_per_cycle = 0;
};
CoreFigures core_figures(const core::CoreSpec& spec);

using Workload = core::RoofWork;
using Bound = core::Roofline;

}  // namespace tessera::suite
