// Stalls by cause, utilisation per unit and energy by unit, one bar per run. A `run --stats`
// report has all three per unit; a training report has the MXU and vector utilisation and the
// MXU / optimizer / other split of its energy (its last epoch).
#include "htmlreport/sections.h"

namespace tessera::htmlreport {
namespace {

Json section_of(const std::string& id, const std::string& title, const Bars& bars) {
  if (bars.empty()) return nullptr;
  return make_section(id, title, Json::array({bars.to_json()}));
}

const Json* last_epoch(const Input& i) {
  const Json& e = last_of(i.data, "epochs");
  return i.kind == Kind::kTrain && e.is_object() ? &e : nullptr;
}

}  // namespace

Json stalls_section(const std::vector<Input>& in) {
  Bars bars("Stall cycles by cause", "cycles");
  for (const Input& i : in) {
    if (i.kind != Kind::kStats || !field(i.data, "stalls").is_object()) continue;
    for (const auto& [cause, cycles] : field(i.data, "stalls").items())
      if (cause != "total" && cycles.is_number()) bars.add(i.label, cause, cycles.get<double>());
  }
  return section_of("stalls", "Stalls by cause", bars);
}

Json utilisation_section(const std::vector<Input>& in) {
  Bars bars("Busy share of the run per unit", "fraction");
  for (const Input& i : in) {
    if (i.kind == Kind::kStats && field(i.data, "units").is_object()) {
      for (const auto& [unit, s] : field(i.data, "units").items())
        bars.add(i.label, unit, number_at(s, "utilisation"));
    } else if (const Json* e = last_epoch(i); e && !field(*e, "mxu_utilization").is_null()) {
      bars.add(i.label, "mxu", number_at(*e, "mxu_utilization"));
      bars.add(i.label, "vector", number_at(*e, "vector_utilization"));
    }
  }
  return section_of("utilisation", "Utilisation per unit", bars);
}

Json energy_section(const std::vector<Input>& in) {
  Bars bars("Energy by unit", "uJ");
  for (const Input& i : in) {
    if (const Json& b = field(field(i.data, "energy"), "breakdown");
        i.kind == Kind::kStats && b.is_object()) {
      for (const auto& [name, pj] : b.items()) {
        const std::string unit = name.ends_with("_pj") ? name.substr(0, name.size() - 3) : name;
        if (pj.is_number()) bars.add(i.label, unit, pj.get<double>() * 1e-6);
      }
    } else if (const Json* e = last_epoch(i); e && !field(*e, "energy_j").is_null()) {
      const double total = number_at(*e, "energy_j") * 1e6;
      const double mxu = number_at(*e, "energy_mxu_j") * 1e6;
      const double adam = number_at(field(*e, "optimizer"), "energy_uj");
      bars.add(i.label, "mxu", mxu);
      bars.add(i.label, "optimizer", adam);
      bars.add(i.label, "other", total - mxu - adam);
    }
  }
  return section_of("energy", "Energy by unit", bars);
}

}  // namespace tessera::htmlreport
