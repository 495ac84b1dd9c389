// The suite's JSON (`tessera bench suite --json`, tagged "tessera-suite" by the caller):
//   {"config": name, "config_hash", "seed",
//    "core": {clock_hz, mxu_count, mxu_rows, mxu_cols, lanes, sublanes, hbm_bytes_per_cycle},
//    "rows": [row_json(...)], "host_seconds": the whole suite's}
// A row that ran:
//   {"name", "supported": true, "cycles", "bound_cycles", "bound_by", "cycles_over_bound",
//    "mxu_utilization", "macs", "hbm_bytes", "vector_ops", "bound": {"mxu", "hbm", "vector"}
//    (cycles of each roof), "sim_hbm_bytes", "stalls": {cause: cycles} (non-zero, largest first),
//    "host_seconds", "host_setup_seconds", "ref_host_seconds", "check"}
// A row that cannot run yet: {"name", "supported": false, "reason"}.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite/bound.h"
#include "suite/run_row.h"

namespace tessera::suite {

nlohmann::ordered_json row_json(const RowResult& r);

nlohmann::ordered_json core_json(const CoreFigures& f);

}  // namespace tessera::suite
