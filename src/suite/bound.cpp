#include "suite/bound.h"

namespace tessera::suite {

namespace {

double over(int64_t work, double per_cycle) {
  return per_cycle > 0 ? static_cast<double>(work) / per_cycle : 0.0;
}

}  // namespace

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

Bound roofline_bound(const CoreFigures& core, const Workload& w) {
  Bound b;
  b.mxu = over(w.macs, static_cast<double>(core.mxu_count) * core.mxu_rows * core.mxu_cols);
  b.hbm = over(w.hbm_bytes, core.hbm_bytes_per_cycle);
  b.vector = over(w.vector_ops, static_cast<double>(core.lanes) * core.sublanes);
  b.cycles = b.mxu;
  if (b.hbm > b.cycles) b.cycles = b.hbm, b.by = "hbm";
  if (b.vector > b.cycles) b.cycles = b.vector, b.by = "vector";
  return b;
}

}  // namespace tessera::suite
