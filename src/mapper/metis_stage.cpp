// METIS k-way baseline for the processor stage (see communities.h): METIS_PartGraphKway on the
// symmetric graph (edge weights scaled to integers in [1, 1000]) with target part weights equal to
// each processor's share of the free cores, then repair_capacity.
#include <metis.h>

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "mapper/communities.h"

namespace tessera::mapper {

std::vector<int> processor_stage_metis(const LogicalGraph& g, const SystemSpec& sys,
                                       uint64_t seed) {
  const int n = g.num_nodes();
  std::vector<int> free_cores(sys.processors);
  for (int p = 0; p < sys.processors; ++p) free_cores[p] = sys.free_cores(p);
  std::vector<int> proc(n, 0);
  if (sys.processors > 1 && n > sys.processors) {
    auto adj = g.undirected();
    double wmax = 0.0;
    for (const auto& a : adj)
      for (const Neighbor& nb : a) wmax = std::max(wmax, nb.weight);
    std::vector<idx_t> xadj{0}, adjncy, adjwgt;
    for (int v = 0; v < n; ++v) {
      for (const Neighbor& nb : adj[v]) {
        adjncy.push_back(nb.node);
        adjwgt.push_back(
            std::max<idx_t>(1, static_cast<idx_t>(std::lround(1000.0 * nb.weight / wmax))));
      }
      xadj.push_back(static_cast<idx_t>(adjncy.size()));
    }
    idx_t nv = n, ncon = 1, nparts = sys.processors, objval = 0;
    std::vector<real_t> tpwgts(sys.processors);
    double total = sys.total_free_cores();
    for (int p = 0; p < sys.processors; ++p) tpwgts[p] = static_cast<real_t>(free_cores[p] / total);
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = static_cast<idx_t>(seed & 0x7fffffff);
    std::vector<idx_t> part(n, 0);
    int rc = METIS_PartGraphKway(&nv, &ncon, xadj.data(), adjncy.data(), nullptr, nullptr,
                                 adjwgt.empty() ? nullptr : adjwgt.data(), &nparts, tpwgts.data(),
                                 nullptr, options, &objval, part.data());
    if (rc != METIS_OK) throw Error("metis", fmt::format("METIS_PartGraphKway failed ({})", rc));
    for (int v = 0; v < n; ++v) proc[v] = static_cast<int>(part[v]);
  }
  repair_capacity(g, free_cores, proc);
  return proc;
}

}  // namespace tessera::mapper
