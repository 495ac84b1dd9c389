#include "core/term_mxu_spec.h"

namespace tessera::core {

MxuPe read_mxu_pe(ConfigReader& r) {
  const std::string pe = r.get_string("core.mxu.pe", "bf16", {"bf16", "term-serial"},
                                      "processing element of the matrix unit: bit-parallel bf16 "
                                      "MAC or term-serial (docs/term-serial.md)");
  return pe == "term-serial" ? MxuPe::TermSerial : MxuPe::Bf16;
}

const char* to_string(MxuPe pe) {
  return pe == MxuPe::TermSerial ? "term-serial" : "bf16";
}

TermMxuSpec read_term_mxu_spec(ConfigReader& r, int sublanes, int mxu_cols) {
  TermMxuSpec s;
  numerics::TermTileConfig& t = s.tile;
  t.rows = static_cast<int>(r.get_int("core.mxu.term.tile_rows", 8, {1, 4096}, "PEs",
                                      "term-serial tile rows (PEs of a row share the inputs)"));
  t.cols = static_cast<int>(r.get_int(
      "core.mxu.term.tile_cols", 8, {1, 4096}, "PEs",
      "term-serial tile columns (PEs of a column share the weights and the exponent block)"));
  t.pe.lanes = static_cast<int>(r.get_int("core.mxu.term.lanes", 8, {1, numerics::kMaxPeLanes},
                                          "lanes", "pairs a term-serial PE takes per step"));
  t.pe.acc_fraction_bits = static_cast<int>(r.get_int(
      "core.mxu.term.acc_width", 23, {numerics::kMinAccFractionBits, numerics::kMaxAccFractionBits},
      "bits", "accumulator width W: significand bits kept below the leading one (23 = fp32)"));
  t.pe.min_step_cycles =
      static_cast<int>(r.get_int("core.mxu.term.min_step_cycles", 1, {0, 8}, "cycles",
                                 "shortest PE step (next inputs cannot arrive sooner)"));
  t.pe.fixed_exponent_mode = r.get_bool(
      "core.mxu.term.fixed_exponent_mode", false,
      "fixed-exponent mode: the exponent block's result is at least core.mxu.term.fixed_exponent "
      "(the window follows larger products or accumulators)");
  t.pe.fixed_exponent = static_cast<int>(r.get_int(
      "core.mxu.term.fixed_exponent", 0,
      {-numerics::kMaxFixedExponent, numerics::kMaxFixedExponent}, "",
      "fixed exponent (product-exponent units: a product of exponents ea, eb has ea + eb)"));
  const std::string serial = r.get_string("core.mxu.term.serial", "inputs", {"inputs", "weights"},
                                          "operand encoded into terms (the other is bit-parallel)");
  t.serial = serial == "weights" ? numerics::TermSerialOperand::Weights
                                 : numerics::TermSerialOperand::Inputs;
  s.tiles = static_cast<int>(
      r.get_int("core.mxu.term.tiles", 0, {0, 1 << 16}, "tiles",
                "tiles sharing an mmul's output blocks (0: one PE per output of a push)"));
  s.push_cycles = static_cast<int>(r.get_int("core.mxu.term.push_cycles", 0, {0, 1 << 16}, "cycles",
                                             "extra unit occupancy per mmul (operand staging)"));
  s.latency_cycles =
      static_cast<int>(r.get_int("core.mxu.term.latency_cycles", 4, {0, 1 << 16}, "cycles",
                                 "pipeline drain from the last step to the result (exponent block, "
                                 "adder tree, accumulate, read-out)"));
  s.area_ratio = r.get_float("core.mxu.term.area_ratio", 1.0, {1e-3, 1e3}, "",
                             "area of a term-serial PE / area of a bf16 MAC PE with as many lanes "
                             "(for speed-up at equal area)");
  s.area_source =
      r.get_string("core.mxu.term.area_source", "unspecified", {}, "where area_ratio comes from");
  s.term_pj = r.get_float("core.mxu.term.term_pj", 0.25, {0, 1e6}, "pJ",
                          "energy of one processed term (one lane, one cycle)");
  s.step_pj = r.get_float("core.mxu.term.step_pj", 1.0, {0, 1e6}, "pJ",
                          "energy of one PE step (exponent block, adder tree, accumulator)");
  const std::string widths =
      r.get_string("core.mxu.term.layer_acc_width", "", {},
                   "per-layer accumulator widths LAYER=W,... (layers not listed: acc_width; "
                   "`tessera train --profile-acc-width` writes it)");
  const std::string why = parse_layer_acc_widths(widths, s.layer_acc_width);
  r.require(why.empty(), "core.mxu.term.layer_acc_width", why);
  if (s.tiles == 0) {
    s.tiles = ((sublanes + t.rows - 1) / t.rows) * ((mxu_cols + t.cols - 1) / t.cols);
  }
  return s;
}

}  // namespace tessera::core
