// Statistics as data: a tree of named counters that components fill and the report walks into
// JSON. Counters are plain numbers; a group is an ordered list of (name, value or subgroup), so
// the JSON keeps the order in which a component declared its counters.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::report {

class StatGroup {
 public:
  StatGroup() = default;

  // Sets (or replaces) a counter. `unit` and `description` are kept for text reports.
  void set(std::string_view name, double value, std::string_view unit = "",
           std::string_view description = "");
  void set_int(std::string_view name, int64_t value, std::string_view unit = "",
               std::string_view description = "");
  // Returns the subgroup `name`, creating it at the end if absent.
  StatGroup& group(std::string_view name);

  // Looks up a counter by dotted path ("mxu.busy_cycles"); throws tessera::Error if absent.
  double get(std::string_view path) const;
  bool has(std::string_view path) const;

  // An ordered JSON object (declaration order kept; converts implicitly to nlohmann::json, which
  // sorts keys). Integer counters are JSON integers; a non-finite value is null.
  nlohmann::ordered_json to_json() const;
  // Indented "name  value unit" lines for terminal summaries.
  std::string to_text(int indent = 0) const;

 private:
  struct Counter {
    double value = 0;
    bool is_int = false;
    std::string unit, description;
  };
  struct Entry {
    std::string name;
    std::variant<Counter, std::unique_ptr<StatGroup>> item;
  };
  const Entry* find(std::string_view name) const;
  Entry* find(std::string_view name);
  std::vector<Entry> m_entries;
};

}  // namespace tessera::report
