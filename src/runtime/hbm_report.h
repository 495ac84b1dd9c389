// The epoch report's "hbm_encoding" object: the exponent base-delta encoding of HBM traffic
// (core/hbm_encoding.h) per tensor kind over the epoch's training steps.
//   {"on": false} when core.hbm.exponent_encoding.on is false; else
//   {"on": true, "group_size", "delta_bits", "kinds": {"<kind>": {"requests", "raw_bytes",
//    "encoded_bytes", "compression_ratio"}, ...}, "total": {...}}
// for every kind of core::HbmKind (weights, activations, gradients, optimizer_state, other).
// compression_ratio = raw_bytes / encoded_bytes (1 when nothing moved). Raw bytes are 4 per word.
// The core's DMAs and, with Adam on the Adam unit, the unit's own HBM traffic count (theta as
// weights, g as gradients, spilled m and v as optimizer state, its program and hyperparameters as
// other).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/hbm_encoding.h"

namespace tessera::runtime {

nlohmann::ordered_json hbm_encoding_json(const core::HbmEncodingSpec& spec,
                                         const core::HbmTrafficByKind& traffic);

// One line for `tessera train`: "HBM encoding: weights 1.23x, ... total 1.20x (raw / encoded
// bytes)".
std::string hbm_encoding_line(const nlohmann::ordered_json& hbm_encoding);

}  // namespace tessera::runtime
