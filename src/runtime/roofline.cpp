#include "runtime/roofline.h"

#include <algorithm>

namespace tessera::runtime {

RooflineBound roofline_bound(const core::CoreSpec& spec, int64_t macs, int64_t hbm_bytes) {
  const double peak = static_cast<double>(spec.mxu_rows) * spec.mxu_cols;
  const double compute = peak > 0 ? static_cast<double>(macs) / peak : 0.0;
  const double memory = spec.hbm_bytes_per_cycle > 0
                            ? static_cast<double>(hbm_bytes) / spec.hbm_bytes_per_cycle
                            : 0.0;
  RooflineBound b;
  b.cycles = std::max(compute, memory);
  if (memory > compute) b.by = "memory";
  return b;
}

}  // namespace tessera::runtime
