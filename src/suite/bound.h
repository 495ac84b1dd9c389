// The roofline bound of a suite row on one core: the fewest cycles in which the core's peak rates
// could do the workload's intrinsic work, whichever roof is lowest:
//   mxu     MACs / (mxu_count * R * C)                MACs per cycle of every MXU (R x C each)
//   hbm     HBM bytes / hbm_bytes_per_cycle           the core's share of the HBM bandwidth
//   vector  vector element ops / (lanes * sublanes)   one element per lane and sublane per cycle
//   bound_cycles = max(mxu, hbm, vector) (fractional); bound_by names the largest (the first of
//   mxu, hbm, vector on a tie; "mxu" for no work).
// The workload's figures are those of the computation, not of a program computing it: MACs of the
// matrix products, bytes of every input read once and every output written once (fp32), and the
// element operations that are not MACs. The bound is a yardstick for the compiler; nothing in the
// timing model is fitted to it.
#pragma once

#include <cstdint>
#include <string>

#include "core/spec.h"

namespace tessera::suite {

// The peak rates of one core, read from its CoreSpec.
struct CoreFigures {
  double clock_hz = 0;
  int mxu_count = 0, mxu_rows = 0, mxu_cols = 0;
  int lanes = 0, sublanes = 0;
  double hbm_bytes_per_cycle = 0;
};
CoreFigures core_figures(const core::CoreSpec& spec);

struct Workload {
  int64_t macs = 0;
  int64_t hbm_bytes = 0;
  int64_t vector_ops = 0;
};

struct Bound {
  double mxu = 0, hbm = 0, vector = 0;  // cycles of each roof
  double cycles = 0;
  std::string by = "mxu";
};
Bound roofline_bound(const CoreFigures& core, const Workload& w);

}  // namespace tessera::suite
