// Runs side by side (two or more training reports): the headline figures of each run's last
// epoch, and a table of MXU busy cycles per layer and phase with a column per run, aligned by
// layer name (a layer a run lacks is left empty).
#include <algorithm>

#include "htmlreport/sections.h"

namespace tessera::htmlreport {
namespace {

const Json& last_epoch_pe_layers(const Input& i) {
  return list_at(field(last_of(i.data, "epochs"), "pe"), "layers");
}

Json aligned_layers(const std::vector<const Input*>& runs) {
  std::vector<std::string> columns{"layer"}, names;
  for (const Input* i : runs) {
    columns.push_back(i->label);
    for (const Json& l : last_epoch_pe_layers(*i)) {
      const std::string n = layer_name(l);
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    }
  }
  Json rows = Json::array();
  for (const std::string& n : names) {
    Json row = Json::array({n});
    for (const Input* i : runs) {
      Json cell = nullptr;
      for (const Json& l : last_epoch_pe_layers(*i))
        if (layer_name(l) == n) cell = field(l, "busy_cycles");
      row.push_back(cell);
    }
    rows.push_back(std::move(row));
  }
  return make_table("MXU busy cycles per layer", std::move(columns), std::move(rows));
}

}  // namespace

Json compare_section(const std::vector<Input>& in) {
  std::vector<const Input*> runs;
  Json rows = Json::array();
  for (const Input& i : in) {
    if (i.kind != Kind::kTrain || list_at(i.data, "epochs").empty()) continue;
    runs.push_back(&i);
    const Json& e = last_of(i.data, "epochs");
    const Json& pe = field(e, "pe");
    rows.push_back({i.label, text_at(pe, "pe", "-"), std::max(1.0, number_at(e, "processors")),
                    number_at(e, "sim_seconds"), number_at(e, "samples_per_sim_second"),
                    number_at(e, "test_accuracy"), number_at(e, "energy_j")});
  }
  if (runs.size() < 2) return nullptr;
  return make_section("compare", "Runs side by side",
                      Json::array({make_table("Last epoch of each run",
                                              {"run", "PE", "processors", "simulated s",
                                               "samples per sim s", "test accuracy", "energy J"},
                                              std::move(rows)),
                                   aligned_layers(runs)}));
}

}  // namespace tessera::htmlreport
