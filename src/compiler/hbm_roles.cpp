#include "compiler/hbm_roles.h"

#include <algorithm>

namespace tessera::compiler {

namespace {

using core::HbmKind;

constexpr uint8_t kFromX = 1, kFromParam = 2, kFromSeed = 4;

// Per value: which of x, the parameters and d.loss it depends on (bit set), in node order.
std::vector<uint8_t> dependencies(const Pipeline& p) {
  const graph::Graph& g = p.graph;
  std::vector<uint8_t> dep(g.values().size(), 0);
  if (p.x >= 0) dep[static_cast<size_t>(p.x)] = kFromX;
  for (int id : p.params) dep[static_cast<size_t>(id)] = kFromParam;
  for (int id : g.constants()) dep[static_cast<size_t>(id)] = kFromParam;
  const int seed = g.has_value("d.loss") ? g.find_value("d.loss") : -1;
  for (const graph::Node& n : g.nodes()) {
    uint8_t d = n.output == seed ? kFromSeed : 0;
    for (int in : n.inputs) d |= dep[static_cast<size_t>(in)];
    dep[static_cast<size_t>(n.output)] = d;
  }
  return dep;
}

HbmKind kind_of(uint8_t dep) {
  if (dep & kFromSeed) return HbmKind::kGradients;
  if (dep & kFromX) return HbmKind::kActivations;
  if (dep & kFromParam) return HbmKind::kWeights;
  return HbmKind::kOther;
}

}  // namespace

std::vector<core::HbmRole> hbm_roles(const Pipeline& p, const std::vector<int64_t>& kernel_pc,
                                     int64_t end_pc) {
  std::vector<core::HbmRole> roles;
  auto whole = [&](const HbmTensor& t, HbmKind kind) {
    if (t.words > 0) roles.push_back(core::HbmRole{0, end_pc, t.hbm, t.words, kind});
  };
  for (const HbmTensor& t : p.out.params) whole(t, HbmKind::kWeights);
  for (const HbmTensor& t : p.out.constants) whole(t, HbmKind::kWeights);
  for (const HbmTensor& t : p.out.state) whole(t, HbmKind::kOptimizerState);
  whole(p.out.grads, HbmKind::kGradients);
  whole(p.out.x, HbmKind::kActivations);
  const std::vector<uint8_t> dep = dependencies(p);
  const auto n = static_cast<int>(kernel_pc.size()) - 1;
  for (const auto& [v, range] : p.live) {
    const HbmKind kind = kind_of(dep[static_cast<size_t>(v)]);
    if (kind == HbmKind::kOther) continue;
    const int64_t first = kernel_pc[static_cast<size_t>(std::clamp(range.first, 0, n))];
    const int64_t end =
        range.second >= n ? end_pc : kernel_pc[static_cast<size_t>(range.second + 1)];
    roles.push_back(core::HbmRole{first, end, p.hbm.at(v),
                                  std::max<int64_t>(1, graph::num_elements(p.graph.value(v).shape)),
                                  kind});
  }
  return roles;
}

}  // namespace tessera::compiler
