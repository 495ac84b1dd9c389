// Many chips: a data-parallel training report (epochs with "processors") or an all-reduce
// benchmark. Charts:
//   topology: {"type": "topology", "title", "layout": "ring" | "grid", "columns", "nodes": N,
//              "links": [{"from", "to", "value"}], "unit"}: chips on a circle (ring, line) or a
//              grid (torus), each directed link coloured by its utilisation;
//   bars of compute / exchange / overlap seconds (last epoch) and of each synchronisation group's
//   supersteps (barrier and exchange seconds); a table of the run-level figures.
#include <fmt/format.h>

#include "htmlreport/sections.h"

namespace tessera::htmlreport {
namespace {

bool is_data_parallel(const Input& i) {
  return i.kind == Kind::kTrain && !field(last_of(i.data, "epochs"), "processors").is_null();
}

Json topology_chart(const Input& i) {
  const Json& links_in = list_at(field(field(i.data, "system"), "fabric"), "links");
  if (links_in.empty()) return nullptr;
  const Json& c = field(i.data, "resolved_config");
  constexpr int64_t kMaxDrawn = int64_t{1} << 20;  // chips the page may draw
  const int64_t chips = count_at(c, "system.chips", kMaxDrawn);
  const int64_t dx = count_at(c, "system.torus.dims_x", kMaxDrawn);
  const int64_t dy = count_at(c, "system.torus.dims_y", kMaxDrawn);
  const bool grid = text_at(c, "system.topology", "").starts_with("torus") && dx * dy == chips;
  Json links = Json::array();
  for (const Json& l : links_in) {
    const double from = number_at(l, "from"), to = number_at(l, "to");
    if (from >= 0 && to >= 0 && from < chips && to < chips)
      links.push_back({{"from", from}, {"to", to}, {"value", number_at(l, "utilisation")}});
  }
  return Json{{"type", "topology"},
              {"title", fmt::format("{}: {} chips, {} ({} per link direction)", i.label, chips,
                                    text_at(c, "system.topology"), "utilisation")},
              {"layout", grid ? "grid" : "ring"},
              {"columns", grid ? dx : chips},
              {"nodes", chips},
              {"links", std::move(links)},
              {"unit", "utilisation"}};
}

}  // namespace

Json many_chip_section(const std::vector<Input>& in) {
  Json charts = Json::array(), rows = Json::array();
  Bars split("Compute, exchange and overlap (last epoch)", "s");
  Bars supersteps("Supersteps per synchronisation group", "s");
  for (const Input& i : in) {
    if (is_data_parallel(i)) {
      const Json& e = last_of(i.data, "epochs");
      for (const char* k : {"compute", "exchange", "overlap"})
        split.add(i.label, k, number_at(e, fmt::format("{}_seconds", k).c_str()));
      rows.push_back({i.label, field(e, "processors"), text_at(i.data, "allreduce"),
                      field(e, "supersteps"), number_at(e, "exchange_share"),
                      number_at(e, "max_link_utilization"), number_at(e, "scaling_efficiency")});
      int g = 0;
      for (const Json& s : list_at(field(i.data, "system"), "sync_groups")) {
        const std::string name =
            fmt::format("{} group {} ({} supersteps)", i.label, ++g, count_at(s, "supersteps"));
        supersteps.add("barrier", name, number_at(s, "barrier_seconds"));
        supersteps.add("exchange", name, number_at(s, "exchange_seconds"));
      }
      if (Json t = topology_chart(i); !t.is_null()) charts.push_back(std::move(t));
    } else if (i.kind == Kind::kAllreduce) {
      const Json& d = i.data;
      split.add(i.label, "exchange", number_at(d, "exchange_seconds"));
      split.add(i.label, "barrier", number_at(d, "barrier_seconds"));
      split.add(i.label, "bandwidth bound", number_at(d, "bound_seconds"));
      split.add(i.label, "simulated", number_at(d, "sim_seconds"));
      rows.push_back({i.label, field(d, "processors"), text_at(d, "algorithm"),
                      field(d, "supersteps"), nullptr, nullptr, number_at(d, "efficiency")});
    }
  }
  if (rows.empty()) return nullptr;
  charts.push_back(split.to_json());
  if (!supersteps.empty()) charts.push_back(supersteps.to_json());
  charts.push_back(make_table("Run figures",
                              {"run", "processors", "all-reduce", "supersteps", "exchange share",
                               "busiest link", "efficiency"},
                              std::move(rows)));
  return make_section("many-chip", "Many chips", std::move(charts));
}

}  // namespace tessera::htmlreport
