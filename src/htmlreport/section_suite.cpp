// The workload suite (`bench suite --json`): per row (workload) its simulated cycles against its
// roofline bound. Charts: bars of cycles / bound per supported row on a logarithmic axis (1 is
// the bound; one series per suite report), a table of every supported row's figures, and a table
// of the unsupported rows with their reason ("reason").
#include "htmlreport/sections.h"

namespace tessera::htmlreport {

Json suite_section(const std::vector<Input>& in) {
  Bars over_bound("Cycles over the roofline bound per workload (1: at the bound)", "x",
                  BarLayout::kLog);
  Json rows = Json::array(), unsupported = Json::array();
  for (const Input& i : in) {
    if (i.kind != Kind::kSuite) continue;
    for (const Json& r : list_at(i.data, "rows")) {
      const std::string name = text_at(r, "name");
      if (field(r, "supported") != true) {
        unsupported.push_back({i.label, name, text_at(r, "reason", "")});
        continue;
      }
      over_bound.add(i.label, name, number_at(r, "cycles_over_bound"));
      rows.push_back({i.label, name, field(r, "cycles"), field(r, "bound_cycles"),
                      text_at(r, "bound_by", ""), field(r, "cycles_over_bound"),
                      field(r, "mxu_utilization"), field(r, "host_seconds"),
                      field(r, "ref_host_seconds")});
    }
  }
  if (rows.empty() && unsupported.empty()) return nullptr;
  Json charts = Json::array();
  if (!over_bound.empty()) charts.push_back(over_bound.to_json());
  if (!rows.empty())
    charts.push_back(make_table("Workloads",
                                {"suite", "workload", "cycles", "bound cycles", "bound by",
                                 "cycles / bound", "MXU utilisation", "host s", "reference host s"},
                                std::move(rows)));
  if (!unsupported.empty())
    charts.push_back(make_table("Unsupported workloads", {"suite", "workload", "reason"},
                                std::move(unsupported)));
  return make_section("suite", "Workload suite", std::move(charts));
}

}  // namespace tessera::htmlreport
