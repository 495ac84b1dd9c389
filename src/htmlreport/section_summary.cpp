// Summary: one facts table, a column per run. Totals over epochs are plain sums in epoch order
// (the browser test recomputes them the same way from the JSON).
#include <fmt/format.h>

#include "htmlreport/sections.h"

namespace tessera::htmlreport {
namespace {

double epoch_sum(const Json& r, const char* key) {
  double s = 0;
  for (const Json& e : list_at(r, "epochs")) s += number_at(e, key);
  return s;
}

Json optional_sum(const Json& r, const char* key) {
  for (const Json& e : list_at(r, "epochs"))
    if (!field(e, key).is_null()) return epoch_sum(r, key);
  return nullptr;
}

Json string_at(const Json& j, const char* key) {
  const Json& v = field(j, key);
  return v.is_string() ? v : Json(nullptr);
}

// The machine's name: "config" as a string, or the "name" of a "config" object (a suite's).
Json config_name(const Json& j) {
  const Json& c = field(j, "config");
  return c.is_object() ? string_at(c, "name") : string_at(j, "config");
}

double rows_sum(const Json& r, const char* key) {
  double s = 0;
  for (const Json& row : list_at(r, "rows")) s += number_at(row, key);
  return s;
}

std::string workload(const Input& in) {
  const Json& d = in.data;
  switch (in.kind) {
    case Kind::kTrain: {
      int64_t steps = 0;
      for (const Json& e : list_at(d, "epochs")) steps += count_at(e, "steps", int64_t{1} << 40);
      return fmt::format("train {} on {}, batch {}, {} steps in {} epochs", text_at(d, "model"),
                         text_at(d, "dataset"), count_at(d, "batch"), steps,
                         list_at(d, "epochs").size());
    }
    case Kind::kStats:
      return fmt::format("run {} ({} bundles)", text_at(d, "program", "a program"),
                         count_at(d, "bundles"));
    case Kind::kAllreduce:
      return fmt::format("all-reduce of {} bytes on {} processors ({}, {} algorithm)",
                         count_at(d, "bytes"), count_at(d, "processors"), text_at(d, "topology"),
                         text_at(d, "algorithm"));
    case Kind::kMap:
      return fmt::format("map {} nodes, method {}, routing {}", list_at(d, "placement").size(),
                         text_at(d, "method"), text_at(d, "routing"));
    case Kind::kMapBench:
      return fmt::format("mapper suite {} on {}", text_at(d, "suite"), text_at(d, "system"));
    case Kind::kSuite: {
      int64_t supported = 0;
      for (const Json& r : list_at(d, "rows")) supported += field(r, "supported") == true;
      return fmt::format("workload suite: {} workloads, {} supported", list_at(d, "rows").size(),
                         supported);
    }
  }
  return "";
}

struct Row {
  const char* key;
  const char* label;
  const char* unit;
};

constexpr Row kRows[] = {
    {"kind", "report", ""},
    {"config", "machine (config)", ""},
    {"config_hash", "config hash", ""},
    {"workload", "workload", ""},
    {"sim_cycles", "simulated cycles", "cycles"},
    {"sim_seconds", "simulated time", "s"},
    {"host_seconds", "host time", "s"},
    {"energy_j", "energy", "J"},
};

Json value(const Input& in, const std::string& key) {
  const Json& d = in.data;
  if (key == "kind") return kind_name(in.kind);
  if (key == "workload") return workload(in);
  if (key == "config") return config_name(d);
  if (key == "config_hash") return string_at(d, "config_hash");
  const bool train = in.kind == Kind::kTrain;
  if (key == "sim_cycles")
    return train ? optional_sum(d, "sim_cycles")
                 : (in.kind == Kind::kStats ? field(d, "cycles") : Json(nullptr));
  if (key == "sim_seconds") {
    if (train) return optional_sum(d, "sim_seconds");
    if (in.kind == Kind::kStats) return field(d, "seconds");
    return in.kind == Kind::kAllreduce ? field(d, "sim_seconds") : Json(nullptr);
  }
  if (key == "host_seconds") {
    if (train) return optional_sum(d, "host_seconds");
    if (in.kind == Kind::kSuite) return rows_sum(d, "host_seconds");
    return in.kind == Kind::kAllreduce ? field(d, "host_seconds") : Json(nullptr);
  }
  if (train) return optional_sum(d, "energy_j");
  if (in.kind == Kind::kStats && field(d, "energy").is_object())
    return number_at(field(d, "energy"), "total_uj") * 1e-6;
  return nullptr;
}

}  // namespace

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kTrain:
      return "train";
    case Kind::kStats:
      return "run";
    case Kind::kAllreduce:
      return "all-reduce";
    case Kind::kMap:
      return "map";
    case Kind::kMapBench:
      return "map bench";
    case Kind::kSuite:
      return "suite";
  }
  return "?";
}

Json summary_section(const std::vector<Input>& in) {
  Json runs = Json::array(), rows = Json::array();
  for (const Input& i : in) runs.push_back(i.label);
  for (const Row& r : kRows) {
    Json values = Json::array();
    bool any = false;
    for (const Input& i : in) {
      values.push_back(value(i, r.key));
      any = any || !values.back().is_null();
    }
    if (any)
      rows.push_back(
          {{"key", r.key}, {"label", r.label}, {"unit", r.unit}, {"values", std::move(values)}});
  }
  Json facts{{"type", "facts"}, {"title", ""}, {"runs", runs}, {"rows", rows}};
  return make_section("summary", "Summary", Json::array({facts}));
}

}  // namespace tessera::htmlreport
