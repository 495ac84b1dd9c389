#include "mapper/core_problem.h"

#include <map>

#include "common/error.h"

namespace tessera::mapper {
namespace {

void fill_edges(CoreProblem& pb, const LogicalGraph& g, const std::vector<int>& local) {
  std::vector<std::map<int, double>> acc(pb.n());
  for (const Edge& e : g.edges()) {
    int a = local[e.src], b = local[e.dst];
    if (a < 0 || b < 0) continue;
    pb.edges.push_back({a, b, e.weight});
    acc[a][b] += e.weight;
    acc[b][a] += e.weight;
  }
  pb.adj.assign(pb.n(), {});
  for (int v = 0; v < pb.n(); ++v)
    for (auto [u, w] : acc[v]) pb.adj[v].push_back({u, w, -1});
  pb.multicast.resize(pb.n());
  for (int v = 0; v < pb.n(); ++v) pb.multicast[v] = g.node(pb.global[v]).multicast ? 1 : 0;
}

}  // namespace

CoreProblem make_core_problem(const LogicalGraph& g, const SystemSpec& sys,
                              const std::vector<int>& proc, int p) {
  CoreProblem pb;
  pb.width = sys.width;
  pb.height = sys.height;
  for (int c = 0; c < sys.cores_per_processor(); ++c)
    if (!sys.occupied[p][c]) pb.free.push_back(c);
  std::vector<int> local(g.num_nodes(), -1);
  for (int v = 0; v < g.num_nodes(); ++v)
    if (proc[v] == p) {
      local[v] = pb.n();
      pb.global.push_back(v);
    }
  TESSERA_CHECK(pb.n() <= static_cast<int>(pb.free.size()),
                "processor stage exceeded a processor's free cores");
  fill_edges(pb, g, local);
  return pb;
}

CoreProblem make_core_problem(const LogicalGraph& g, int width, int height) {
  if (g.num_nodes() > width * height)
    throw Error("mesh",
                fmt::format("{} nodes do not fit a {}x{} mesh", g.num_nodes(), width, height));
  CoreProblem pb;
  pb.width = width;
  pb.height = height;
  for (int c = 0; c < width * height; ++c) pb.free.push_back(c);
  std::vector<int> local(g.num_nodes());
  for (int v = 0; v < g.num_nodes(); ++v) {
    local[v] = v;
    pb.global.push_back(v);
  }
  fill_edges(pb, g, local);
  return pb;
}

double core_cost(const CoreProblem& pb, const std::vector<int>& pos) {
  double c = 0.0;
  for (const Edge& e : pb.edges) c += e.weight * pb.dist(pos[e.src], pos[e.dst]);
  return c;
}

void check_core_placement(const CoreProblem& pb, const std::vector<int>& pos) {
  TESSERA_CHECK(static_cast<int>(pos.size()) == pb.n(), "placement size");
  std::vector<char> ok(pb.width * pb.height, 0), used(pb.width * pb.height, 0);
  for (int c : pb.free) ok[c] = 1;
  for (int c : pos) {
    TESSERA_CHECK(c >= 0 && c < pb.width * pb.height && ok[c], "node placed on an occupied core");
    TESSERA_CHECK(!used[c]++, "two nodes on one core");
  }
}

}  // namespace tessera::mapper
