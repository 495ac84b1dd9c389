// The roofline bound of a piece of work on one core: the fewest cycles in which the core's peak
// rates could do it, whichever roof is highest:
//   mxu     MACs / (mxu_count * R * C)                every MXU's R x C MACs per cycle
//   hbm     HBM bytes / hbm_bytes_per_cycle           the core's share of the HBM bandwidth
//   vector  vector element ops / (lanes * sublanes)   one element per lane and sublane per cycle
//   cycles = max(mxu, hbm, vector) (fractional); `by` names the largest (the first of mxu, hbm,
//   vector on a tie; mxu for no work).
// The one definition behind the workload suite's bound (whole workloads) and the training
// report's per-layer bound (a layer's kernels, no vector work counted). A yardstick: nothing in
// the timing model is fitted to it.
#pragma once

#include <cstdint>

#include "core/spec.h"

namespace tessera::core {

struct RoofWork {
  int64_t macs = 0;
  int64_t hbm_bytes = 0;
  int64_t vector_ops = 0;
};

enum class Roof : uint8_t { kMxu, kHbm, kVector };
// "mxu", "hbm", "vector".
const char* to_string(Roof roof);

struct Roofline {
  double mxu = 0, hbm = 0, vector = 0;  // cycles of each roof
  double cycles = 0;
  Roof by = Roof::kMxu;
};

Roofline roofline(const CoreSpec& spec, const RoofWork& work);

}  // namespace tessera::core
