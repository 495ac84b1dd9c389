#include "core/term_mxu_report.h"

namespace tessera::core {

TermMxuSummary summarize_term_mxu(const CoreSpec& spec, const MxuStats& mx) {
  const TermMxuSpec& ts = spec.term;
  const int blocks = ((spec.sublanes + ts.tile.rows - 1) / ts.tile.rows) *
                     ((spec.mxu_cols + ts.tile.cols - 1) / ts.tile.cols);
  const int64_t rounds = (blocks + ts.tiles - 1) / ts.tiles;
  const int64_t steps = (spec.mxu_rows + ts.tile.pe.lanes - 1) / ts.tile.pe.lanes;
  TermMxuSummary s;
  s.busy_cycles = mx.busy_cycles;
  s.bf16_busy_equal_pe = mx.pushes * rounds * steps;
  s.speedup_equal_pe = s.busy_cycles > 0 ? static_cast<double>(s.bf16_busy_equal_pe) /
                                               static_cast<double>(s.busy_cycles)
                                         : 0.0;
  s.speedup_equal_area = s.speedup_equal_pe / ts.area_ratio;
  s.energy_pj = ts.term_pj * static_cast<double>(mx.term.terms_processed) +
                ts.step_pj * static_cast<double>(mx.term.pe_steps);
  s.bf16_energy_pj = spec.energy.mac_pj * static_cast<double>(mx.macs);
  return s;
}

void report_term_mxu(const CoreSpec& spec, const MxuStats& mx, report::StatGroup& mxu_group) {
  if (spec.mxu_pe != MxuPe::TermSerial) return;
  const numerics::TermMatmulStats& t = mx.term;
  const TermMxuSummary s = summarize_term_mxu(spec, mx);
  const double slots =
      static_cast<double>(t.terms_processed + t.terms_skipped_zero + t.terms_skipped_oob);
  report::StatGroup& g = mxu_group.group("term");
  g.set_int("terms_processed", t.terms_processed, "terms");
  g.set_int("terms_skipped_zero", t.terms_skipped_zero, "terms",
            "zero digits, zero and padding lanes");
  g.set_int("terms_skipped_oob", t.terms_skipped_oob, "terms",
            "terms below the accumulator window");
  g.set("skipped_zero_fraction",
        slots > 0 ? static_cast<double>(t.terms_skipped_zero) / slots : 0.0, "",
        "of 8 slots per lane and step");
  g.set("skipped_oob_fraction", slots > 0 ? static_cast<double>(t.terms_skipped_oob) / slots : 0.0,
        "", "of 8 slots per lane and step");
  g.set_int("pe_steps", t.pe_steps, "steps");
  g.set_int("tile_cycles", t.cycles, "cycles", "lockstep cycles summed over all output blocks");
  g.set_int("pe_stall_cycles", t.pe_stall_cycles, "cycles",
            "PEs waiting for the slowest PE of their tile");
  g.set_int("lane_idle_cycles", t.lane_idle_cycles, "cycles", "lanes waiting within their PE");
  g.set_int("tile_imbalance_cycles", mx.term_tile_imbalance, "cycles",
            "tiles waiting for the busiest tile of a push");
  g.set_int("bf16_busy_equal_pe", s.bf16_busy_equal_pe, "cycles", "the same PEs as bf16 MAC PEs");
  g.set("speedup_equal_pe", s.speedup_equal_pe);
  g.set("speedup_equal_area", s.speedup_equal_area, "",
        "area_ratio from core.mxu.term.area_source");
  g.set("energy_pj", s.energy_pj, "pJ", "term_pj x terms + step_pj x PE steps");
  g.set("bf16_energy_pj", s.bf16_energy_pj, "pJ", "mac_pj x MACs");
}

}  // namespace tessera::core
