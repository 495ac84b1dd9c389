#include "core/roofline.h"

namespace tessera::core {

namespace {

double over(int64_t work, double per_cycle) {
  return per_cycle > 0 ? static_cast<double>(work) / per_cycle : 0.0;
}

}  // namespace

const char* to_string(Roof roof) {
  switch (roof) {
    case Roof::kMxu:
      return "mxu";
    case Roof::kHbm:
      return "hbm";
    case Roof::kVector:
      return "vector";
  }
  return "?";
}

Roofline roofline(const CoreSpec& spec, const RoofWork& work) {
  Roofline r;
  r.mxu = over(work.macs, static_cast<double>(spec.mxu_count) * spec.mxu_rows * spec.mxu_cols);
  r.hbm = over(work.hbm_bytes, spec.hbm_bytes_per_cycle);
  r.vector = over(work.vector_ops, static_cast<double>(spec.lanes) * spec.sublanes);
  r.cycles = r.mxu;
  if (r.hbm > r.cycles) r.cycles = r.hbm, r.by = Roof::kHbm;
  if (r.vector > r.cycles) r.cycles = r.vector, r.by = Roof::kVector;
  return r;
}

}  // namespace tessera::core
