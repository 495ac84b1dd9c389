// Scotch graphMap baseline (see placers.h). Scotch maps a symmetric graph onto a target
// architecture; the target is the processor's width x height mesh (SCOTCH_archMesh2), restricted
// to the free cores with SCOTCH_archSub. The graph is padded with isolated vertices to exactly one
// vertex per free core, so a zero-imbalance mapping puts exactly one vertex on every core. Edge
// weights are scaled to integers in [1, 1000]. Any collision Scotch still leaves is resolved by
// moving the later node to the nearest free core.
#include <scotch.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "common/error.h"
#include "mapper/placers.h"

namespace tessera::mapper {
namespace {

// Owns the Scotch objects of one mapping call.
struct ScotchCall {
  SCOTCH_Graph graph;
  SCOTCH_Arch mesh;
  SCOTCH_Arch sub;
  SCOTCH_Strat strat;
  ScotchCall() {
    SCOTCH_graphInit(&graph);
    SCOTCH_archInit(&mesh);
    SCOTCH_archInit(&sub);
    SCOTCH_stratInit(&strat);
  }
  ~ScotchCall() {
    SCOTCH_stratExit(&strat);
    SCOTCH_archExit(&sub);
    SCOTCH_archExit(&mesh);
    SCOTCH_graphExit(&graph);
  }
};

}  // namespace

std::vector<int> place_scotch(const CoreProblem& pb, uint64_t seed) {
  const int n = pb.n();
  const int nv = static_cast<int>(pb.free.size());
  if (n == 0) return {};
  double wmax = 0.0;
  for (int v = 0; v < n; ++v)
    for (const Neighbor& nb : pb.adj[v]) wmax = std::max(wmax, nb.weight);
  std::vector<SCOTCH_Num> verttab{0}, edgetab, edlotab;
  for (int v = 0; v < nv; ++v) {
    if (v < n)
      for (const Neighbor& nb : pb.adj[v]) {
        edgetab.push_back(nb.node);
        edlotab.push_back(std::max<SCOTCH_Num>(
            1, static_cast<SCOTCH_Num>(std::lround(1000.0 * nb.weight / wmax))));
      }
    verttab.push_back(static_cast<SCOTCH_Num>(edgetab.size()));
  }
  ScotchCall s;
  SCOTCH_randomSeed(static_cast<SCOTCH_Num>(seed & 0x7fffffff));
  SCOTCH_randomReset();
  if (SCOTCH_graphBuild(&s.graph, 0, nv, verttab.data(), nullptr, nullptr, nullptr,
                        static_cast<SCOTCH_Num>(edgetab.size()), edgetab.data(),
                        edlotab.data()) != 0)
    throw Error("scotch", "SCOTCH_graphBuild failed");
  SCOTCH_archMesh2(&s.mesh, pb.width, pb.height);
  SCOTCH_Arch* arch = &s.mesh;
  std::vector<SCOTCH_Num> sub(pb.free.begin(), pb.free.end());
  if (nv < pb.width * pb.height) {  // sub-architecture terminals are numbered in `sub` order
    if (SCOTCH_archSub(&s.sub, &s.mesh, nv, sub.data()) != 0)
      throw Error("scotch", "SCOTCH_archSub failed");
    arch = &s.sub;
  }
  SCOTCH_stratGraphMapBuild(&s.strat, SCOTCH_STRATQUALITY | SCOTCH_STRATBALANCE, nv, 0.0);
  std::vector<SCOTCH_Num> part(nv, 0);
  if (SCOTCH_graphMap(&s.graph, arch, &s.strat, part.data()) != 0)
    throw Error("scotch", "SCOTCH_graphMap failed");
  std::vector<int> pos(n);
  std::vector<char> used(pb.width * pb.height, 0);
  std::vector<int> late;
  for (int v = 0; v < n; ++v) {
    int c = nv < pb.width * pb.height ? pb.free[part[v]] : static_cast<int>(part[v]);
    if (used[c]) {
      late.push_back(v);
      pos[v] = c;
      continue;
    }
    used[c] = 1;
    pos[v] = c;
  }
  for (int v : late) {
    int c = nearest_free(pb, pos[v], used);
    used[c] = 1;
    pos[v] = c;
  }
  return pos;
}

}  // namespace tessera::mapper
