// The roofline bound of a piece of work on one core: the fewest cycles in which the matrix unit's
// peak (core.mxu.rows x core.mxu.cols MACs per cycle) could do its MACs, or the HBM data path
// (core.hbm_bytes_per_cycle) could carry its bytes, whichever is more:
//   bound = max(macs / (rows x cols), hbm_bytes / hbm_bytes_per_cycle)   (cycles, fractional)
// "by" names the roof that sets it ("compute" or "memory"; "compute" on a tie, and for no work).
#pragma once

#include <cstdint>
#include <string>

#include "core/spec.h"

namespace tessera::runtime {

struct RooflineBound {
  double cycles = 0;
  std::string by = "compute";
};

RooflineBound roofline_bound(const core::CoreSpec& spec, int64_t macs, int64_t hbm_bytes);

}  // namespace tessera::runtime
