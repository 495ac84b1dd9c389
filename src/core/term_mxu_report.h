// The term-serial MXU's statistics group ("term" under "mxu" in a run's statistics): what the PEs
// did (terms processed, skipped zero / out of bounds), where the cycles went, and the comparison
// with bit-parallel bf16 PEs (core/term_mxu_spec.h). Definitions:
//   bf16_busy_equal_pe  cycles the same PEs (tiles x rows x cols, `lanes` lanes each) would be busy
//                       as bf16 MAC PEs (one L-lane step per cycle): per push ceil(blocks / tiles)
//                       x ceil(R / lanes) cycles
//   speedup_equal_pe    bf16_busy_equal_pe / (the term-serial unit's busy cycles)
//   speedup_equal_area  speedup_equal_pe / area_ratio (1 / area_ratio as many bf16 PEs fit)
//   energy_pj           term_pj x terms processed + step_pj x PE steps; bf16_energy_pj = mac_pj x
//   MACs
#pragma once

#include "core/mxu.h"
#include "core/spec.h"
#include "report/stats.h"

namespace tessera::core {

struct TermMxuSummary {
  int64_t busy_cycles = 0, bf16_busy_equal_pe = 0;
  double speedup_equal_pe = 0, speedup_equal_area = 0, energy_pj = 0, bf16_energy_pj = 0;
};

TermMxuSummary summarize_term_mxu(const CoreSpec& spec, const MxuStats& mx);

// Adds the "term" group to `mxu_group` (nothing for bf16 PEs).
void report_term_mxu(const CoreSpec& spec, const MxuStats& mx, report::StatGroup& mxu_group);

}  // namespace tessera::core
