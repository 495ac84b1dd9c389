#include "mapper/features.h"

#include <algorithm>
#include <cmath>

namespace tessera::mapper {

std::vector<FeatureRow> raw_features(const LogicalGraph& g) {
  std::vector<FeatureRow> f(g.num_nodes());
  for (int v = 0; v < g.num_nodes(); ++v) {
    double in_w = 0.0, out_w = 0.0;
    for (const Neighbor& e : g.in(v)) in_w += std::fabs(e.weight);
    for (const Neighbor& e : g.out(v)) out_w += std::fabs(e.weight);
    double in_c = static_cast<double>(g.in(v).size());
    double out_c = static_cast<double>(g.out(v).size());
    f[v] = {g.node(v).multicast ? 1.0 : 0.0, in_c, out_c, in_c + out_c, in_w, out_w, in_w + out_w};
  }
  return f;
}

std::vector<FeatureRow> node_features(const LogicalGraph& g) {
  std::vector<FeatureRow> f = raw_features(g);
  for (int k = 0; k < kNumFeatures; ++k) {
    double lo = INFINITY, hi = -INFINITY;
    for (const FeatureRow& r : f) {
      lo = std::min(lo, r[k]);
      hi = std::max(hi, r[k]);
    }
    for (FeatureRow& r : f) r[k] = hi > lo ? (r[k] - lo) / (hi - lo) : 0.0;
  }
  return f;
}

}  // namespace tessera::mapper
