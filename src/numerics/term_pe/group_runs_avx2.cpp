// The lean lockstep kernel at 8 PEs per vector: group_runs_kernel.h instantiated for AVX2 with
// Avx2Ops (tile.h, group_runs_avx2).
#include <algorithm>

#include "numerics/term_pe/tile.h"

#if defined(__x86_64__)
#define TESSERA_SIMD_TARGET __attribute__((target("avx2")))
#include "numerics/term_pe/group_runs_kernel.h"
#endif

namespace tessera::numerics::detail {

#if defined(__x86_64__)

TESSERA_SIMD_TARGET void group_runs_avx2(const PeConfig& cfg, const TileOperands& ops,
                                         const SerialSteps& row, int steps, const RowGroup* groups,
                                         int count, GroupTotals& totals, uint8_t* done) {
  group_runs_simd<Avx2Ops>(group_run_supported(cfg), cfg, ops, row, steps, groups, count, totals,
                           done);
}

#else

void group_runs_avx2(const PeConfig&, const TileOperands&, const SerialSteps&, int, const RowGroup*,
                     int count, GroupTotals&, uint8_t* done) {
  std::fill(done, done + count, uint8_t{0});
}

#endif

}  // namespace tessera::numerics::detail
