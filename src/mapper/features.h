// Node features (docs/mapper.md, "Inputs"): 7 numbers per logical node, each min-max normalised
// over the graph's nodes:
//   0 multicast flag, 1 input connection count, 2 output connection count, 3 total connections,
//   4 input weight, 5 output weight, 6 total weight
// Weights are absolute values, summed. Normalisation: (v - min) / (max - min) per column; a
// constant column (max == min) becomes all 0.
#pragma once

#include <array>
#include <vector>

#include "mapper/graph.h"

namespace tessera::mapper {

inline constexpr int kNumFeatures = 7;
using FeatureRow = std::array<double, kNumFeatures>;

std::vector<FeatureRow> raw_features(const LogicalGraph& g);
std::vector<FeatureRow> node_features(const LogicalGraph& g);

}  // namespace tessera::mapper
