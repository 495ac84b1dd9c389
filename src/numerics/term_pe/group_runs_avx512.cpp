// The lean lockstep kernel at 16 PEs per vector, two RowGroups side by side: group_runs_kernel.h
// instantiated for AVX-512 F and BW with Avx512Ops (tile.h, group_runs_avx512).
//
// GCC 12's AVX-512 intrinsics start masked operations from _mm512_undefined_epi32(), a
// self-initialised variable that -Wuninitialized and -Wmaybe-uninitialized report once inlined
// (GCC bug 105593, fixed in GCC 13); both are off for this file, before any header is read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <algorithm>

#include "numerics/term_pe/tile.h"

#if defined(__x86_64__)
#define TESSERA_SIMD_TARGET __attribute__((target("avx512f,avx512bw")))
#include "numerics/term_pe/group_runs_kernel.h"
#endif

namespace tessera::numerics::detail {

#if defined(__x86_64__)

TESSERA_SIMD_TARGET void group_runs_avx512(const PeConfig& cfg, const TileOperands& ops,
                                           const SerialSteps& row, int steps,
                                           const RowGroup* groups, int count, GroupTotals& totals,
                                           uint8_t* done) {
  group_runs_simd<Avx512Ops>(group_run_avx512_supported(cfg), cfg, ops, row, steps, groups, count,
                             totals, done);
}

#else

void group_runs_avx512(const PeConfig&, const TileOperands&, const SerialSteps&, int,
                       const RowGroup*, int count, GroupTotals&, uint8_t* done) {
  std::fill(done, done + count, uint8_t{0});
}

#endif

}  // namespace tessera::numerics::detail
