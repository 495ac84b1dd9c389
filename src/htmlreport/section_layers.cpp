// Per-layer MXU work from a training report's "pe" block (its last epoch): pushes, MACs, busy
// cycles, the achieved fraction of the MXU's peak (MACs / (busy cycles x rows x cols)) and energy;
// the layer's issue cycles, HBM bytes and roofline bound (core/roofline.h) with a roofline
// chart (one point per layer and phase: MACs per HBM byte, MACs per issue cycle);
// the other kernels' issue cycles and HBM bytes per op ("kernels"), with their share of the step;
// for term-serial PEs, the speed-up against bit-parallel PEs and the shares of term slots
// processed, skipped as zero and skipped as out of bounds.
#include <algorithm>

#include "htmlreport/sections.h"

namespace tessera::htmlreport {
namespace {

const Json* pe_block(const Input& i) {
  const Json& pe = field(last_of(i.data, "epochs"), "pe");
  return i.kind == Kind::kTrain && !list_at(pe, "layers").empty() ? &pe : nullptr;
}

// One MXU's MACs per cycle (busy cycles are counted per MXU).
double mxu_peak_macs(const Input& i) {
  const Json& c = field(i.data, "resolved_config");
  return number_at(c, "core.mxu.rows") * number_at(c, "core.mxu.cols");
}

// Every MXU's MACs per cycle: the roofline's compute roof (core/roofline.h; a report without
// core.mxu.count has one MXU).
double core_peak_macs(const Input& i) {
  const Json& c = field(i.data, "resolved_config");
  return mxu_peak_macs(i) * std::max(1.0, number_at(c, "core.mxu.count"));
}

}  // namespace

std::string layer_name(const Json& l) {
  return text_at(l, "layer") + " " + text_at(l, "phase");
}

Json layers_section(const std::vector<Input>& in) {
  Json rows = Json::array();
  Json bounds = Json::array();
  Bars cycles("MXU busy cycles per layer", "cycles");
  Json roofline = {{"type", "roofline"},
                   {"title", "Roofline per layer and phase (last epoch)"},
                   {"x", "MACs per HBM byte"},
                   {"y", "MACs per cycle"},
                   {"peak", 0.0},
                   {"bandwidth", 0.0},
                   {"points", Json::array()}};
  Bars op_cycles("Issue cycles of the other kernels per op (last epoch)", "cycles");
  Json op_rows = Json::array();
  for (const Input& i : in) {
    const Json* pe = pe_block(i);
    if (!pe) continue;
    for (const Json& k : list_at(*pe, "kernels")) {
      op_cycles.add(i.label, text_at(k, "op"), number_at(k, "cycles"));
      op_rows.push_back({i.label, text_at(k, "op"), number_at(k, "cycles"),
                         number_at(k, "hbm_bytes"), number_at(k, "cycle_share")});
    }
    const double peak = mxu_peak_macs(i);
    roofline["peak"] = core_peak_macs(i);
    roofline["bandwidth"] = number_at(field(i.data, "resolved_config"), "core.hbm.bytes_per_cycle");
    for (const Json& l : list_at(*pe, "layers")) {
      const double busy = number_at(l, "busy_cycles"), macs = number_at(l, "macs");
      const double issued = number_at(l, "cycles"), bytes = number_at(l, "hbm_bytes");
      rows.push_back({i.label, text_at(l, "layer"), text_at(l, "phase"), number_at(l, "pushes"),
                      macs, busy, busy > 0 && peak > 0 ? macs / (busy * peak) : 0.0,
                      number_at(l, "energy_pj") * 1e-6});
      bounds.push_back({i.label, text_at(l, "layer"), text_at(l, "phase"), issued, bytes,
                        number_at(l, "bound_cycles"), text_at(l, "bound_by"),
                        number_at(l, "bound_fraction")});
      cycles.add(i.label, layer_name(l), busy);
      if (bytes > 0 && issued > 0)
        roofline["points"].push_back({{"series", i.label},
                                      {"name", i.label + " " + layer_name(l)},
                                      {"x", macs / bytes},
                                      {"y", macs / issued}});
    }
  }
  if (rows.empty()) return nullptr;
  Json charts = Json::array({cycles.to_json(),
                             make_table("MXU work per layer (last epoch)",
                                        {"run", "layer", "phase", "pushes", "MACs", "busy cycles",
                                         "achieved fraction of peak", "energy uJ"},
                                        std::move(rows)),
                             make_table("Roofline bound per layer (last epoch)",
                                        {"run", "layer", "phase", "cycles", "HBM bytes",
                                         "bound cycles", "bound by", "achieved fraction of bound"},
                                        std::move(bounds))});
  if (!op_rows.empty()) {
    charts.push_back(op_cycles.to_json());
    charts.push_back(make_table("Other kernels per op (last epoch)",
                                {"run", "op", "cycles", "HBM bytes", "share of the step's cycles"},
                                std::move(op_rows)));
  }
  if (!roofline["points"].empty() && number_at(roofline, "peak") > 0 &&
      number_at(roofline, "bandwidth") > 0)
    charts.push_back(std::move(roofline));
  return make_section("layers", "Per layer", std::move(charts));
}

Json term_serial_section(const std::vector<Input>& in) {
  Bars speedup("Speed-up against bit-parallel PEs (equal PE count)", "x");
  Json charts = Json::array();
  for (const Input& i : in) {
    const Json* pe = pe_block(i);
    if (!pe || text_at(*pe, "pe", "") != "term-serial") continue;
    Bars shares("Term slots of " + i.label, "fraction");
    for (const Json& l : list_at(*pe, "layers")) {
      speedup.add(i.label, layer_name(l), number_at(l, "speedup_equal_pe"));
      const double done = number_at(l, "terms_processed"),
                   zero = number_at(l, "terms_skipped_zero"),
                   oob = number_at(l, "terms_skipped_oob"), all = done + zero + oob;
      if (all <= 0) continue;
      shares.add("processed", layer_name(l), done / all);
      shares.add("skipped (zero)", layer_name(l), zero / all);
      shares.add("skipped (out of bounds)", layer_name(l), oob / all);
    }
    if (!shares.empty()) charts.push_back(shares.to_json());
  }
  if (speedup.empty()) return nullptr;
  charts.insert(charts.begin(), speedup.to_json());
  return make_section("term-serial", "Term-serial PE", std::move(charts));
}

}  // namespace tessera::htmlreport
