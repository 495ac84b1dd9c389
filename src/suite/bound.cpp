#include "suite/bound.h"

namespace tessera::suite {

CoreFigures core_figures(const core::CoreSpec& spec) {
  CoreFigures f;
  f.clock_hz = spec.clock_hz;
  f.mxu_count = spec.mxu_count;
  f.mxu_rows = spec.mxu_rows;
  f.mxu_cols = spec.mxu_cols;
  f.lanes = spec.lanes;
  f.sublanes = spec.sublanes;
  f.hbm_bytes_per_cycle = spec.hbm_bytes_per_cycle;
  return f;
}

}  // namespace tessera::suite
