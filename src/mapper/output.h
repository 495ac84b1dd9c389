// Output of a mapping: the result JSON and the SVG picture.
//
// JSON: {"method", "routing", "multicast": "replicate-at-source", "placement": [{"node",
// "processor", "x", "y", "community"}], "routes": [{"edge", "src", "dst", "processor", "hops":
// "EENS"}], "inter_processor":
// [{"edge", "src", "dst", "from", "to", "hops"}], "metrics": {...}, "deadlock": {"free", "cycle"},
// "noc": {...}} plus "stage_seconds" when timing is requested (left out by default so that the
// same inputs give byte-identical files). "community" is the node's community of the logical graph,
// Louvain at resolution 1 with the run's seed (communities.h louvain: the processor stage's first
// step, before its communities are merged or split to the processor count), whatever the method.
// SVG: one panel per processor: cores as squares (grey = occupied, white = free, blue = placed,
// labelled with the node id), every on-chip link as a short arrow coloured by its load on a
// white -> red scale relative to the maximum load.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "mapper/mapper.h"
#include "mapper/noc_sim.h"

namespace tessera::mapper {

nlohmann::ordered_json metrics_json(const Metrics& m, const SystemSpec& sys);
nlohmann::ordered_json result_json(const LogicalGraph& g, const SystemSpec& sys,
                                   const MapOptions& opt, const MapResult& res,
                                   const NocResult* noc, bool timing);
std::string result_svg(const LogicalGraph& g, const SystemSpec& sys, const MapResult& res);
// Default policy file: $TESSERA_MAPPER_POLICY, else data/mapper/policy.bin of the source tree.
std::string default_policy_path();

}  // namespace tessera::mapper
