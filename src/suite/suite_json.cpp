#include "suite/suite_json.h"

namespace tessera::suite {

nlohmann::ordered_json row_json(const RowResult& r) {
  nlohmann::ordered_json j;
  j["name"] = r.name;
  j["supported"] = !r.unsupported;
  if (r.unsupported) {
    j["reason"] = *r.unsupported;
    return j;
  }
  j["cycles"] = r.cycles;
  j["bound_cycles"] = r.bound.cycles;
  j["bound_by"] = core::to_string(r.bound.by);
  j["cycles_over_bound"] = r.cycles_over_bound;
  j["mxu_utilization"] = r.mxu_utilization;
  j["macs"] = r.work.macs;
  j["hbm_bytes"] = r.work.hbm_bytes;
  j["vector_ops"] = r.work.vector_ops;
  j["bound"] = {{"mxu", r.bound.mxu}, {"hbm", r.bound.hbm}, {"vector", r.bound.vector}};
  j["sim_hbm_bytes"] = r.sim_hbm_bytes;
  nlohmann::ordered_json stalls = nlohmann::ordered_json::object();
  for (const auto& [cause, cycles] : r.stalls) stalls[cause] = cycles;
  j["stalls"] = stalls;
  j["host_seconds"] = r.host_seconds;
  j["host_setup_seconds"] = r.host_setup_seconds;
  j["ref_host_seconds"] = r.ref_host_seconds;
  j["check"] = r.check;
  return j;
}

nlohmann::ordered_json core_json(const CoreFigures& f) {
  nlohmann::ordered_json j;
  j["clock_hz"] = f.clock_hz;
  j["mxu_count"] = f.mxu_count;
  j["mxu_rows"] = f.mxu_rows;
  j["mxu_cols"] = f.mxu_cols;
  j["lanes"] = f.lanes;
  j["sublanes"] = f.sublanes;
  j["hbm_bytes_per_cycle"] = f.hbm_bytes_per_cycle;
  return j;
}

}  // namespace tessera::suite
