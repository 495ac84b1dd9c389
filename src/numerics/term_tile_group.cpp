// The lean lockstep runs' width-independent parts (term_tile_group.h): which widths a configuration
// and host allow, the choice between them, and the truncated-lane multiplier table both read.
#include "numerics/term_tile_group.h"

#include <algorithm>
#include <array>

#include "common/error.h"
#include "numerics/host_cpu.h"
#include "numerics/term_encoding.h"
#include "numerics/term_tile_group_tables.h"

namespace tessera::numerics::detail {

#if defined(__x86_64__)

bool group_run_supported(const PeConfig& cfg) {
  return cfg.acc_fraction_bits <= kFullAccumulatorWidth && cfg.lanes <= kGroupPes &&
         tile_avx2_supported(cfg);
}

bool group_run_avx512_supported(const PeConfig& cfg) {
  return group_run_supported(cfg) && host_has_avx512bw();
}

const std::array<PairTerms, 512>& pair_terms() {
  static const std::array<PairTerms, 512> table = [] {
    std::array<PairTerms, 512> t{};
    for (int mb = 1; mb < 256; ++mb)
      for (const bool negative : {false, true}) {
        PairTerms& e = t[static_cast<size_t>(negative ? 512 - mb : mb)];
        const TermList& tl = csd_table()[mb];
        int adding = 0, subtracting = 0;
        for (int i = 0; i < tl.count; ++i) {
          const bool adds = (tl.terms[i].sign > 0) != negative;
          int& slot = adds ? adding : subtracting;
          TESSERA_CHECK(slot < kPairSlots, "pair_terms: too many terms of one sign");
          e.mult[slot++] |= (uint32_t{1} << (7 + tl.terms[i].power)) << (adds ? 16 : 0);
        }
      }
    return t;
  }();
  return table;
}

void group_runs(const PeConfig& cfg, const TileOperands& ops, const SerialSteps& row, int steps,
                const RowGroup* groups, int count, GroupTotals& totals, uint8_t* done) {
  if (group_run_avx512_supported(cfg))
    group_runs_avx512(cfg, ops, row, steps, groups, count, totals, done);
  else
    group_runs_avx2(cfg, ops, row, steps, groups, count, totals, done);
}

#else

bool group_run_supported(const PeConfig&) {
  return false;
}
bool group_run_avx512_supported(const PeConfig&) {
  return false;
}

void group_runs(const PeConfig& cfg, const TileOperands& ops, const SerialSteps& row, int steps,
                const RowGroup* groups, int count, GroupTotals& totals, uint8_t* done) {
  group_runs_avx2(cfg, ops, row, steps, groups, count, totals, done);
}

#endif

}  // namespace tessera::numerics::detail
