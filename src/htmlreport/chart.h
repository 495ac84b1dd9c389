// The chart descriptions a section hands to the page's script (assets/report.js), which draws
// each by its "type":
//   bars:     {"type": "bars", "title", "unit", "categories": [..], "series": [{"name", "values"}]}
//             grouped bars, one group per category, one bar per series (a run, or a quantity);
//   lines:    {"type": "lines", "title", "x", "y", "series": [{"name", "points": [[x, y], ..]}]};
//   table:    {"type": "table", "title", "columns": [..], "rows": [[..], ..]};
//   facts:    {"type": "facts", "title", "runs": [..], "rows": [{"key", "label", "unit",
//             "values": [v or null per run]}]}: a key/value table, values also as data- attributes;
//   topology, mesh, timeline: see section_many_chip.h, section_mapper.h, timeline.h.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::htmlreport {

using Json = nlohmann::ordered_json;

// A section of the page: {"id", "title", "charts": [..]}.
Json make_section(const std::string& id, const std::string& title, Json charts);

// Grouped bars built value by value: categories and series keep their order of first use; a
// missing (series, category) value is 0.
class Bars {
 public:
  Bars(std::string title, std::string unit) : m_title(std::move(title)), m_unit(std::move(unit)) {}
  void add(const std::string& series, const std::string& category, double value);
  bool empty() const { return m_series.empty(); }
  Json to_json() const;

 private:
  std::string m_title, m_unit;
  std::vector<std::string> m_categories;
  std::vector<std::pair<std::string, std::vector<std::pair<size_t, double>>>> m_series;
};

// Lines built point by point, series in order of first use.
class Lines {
 public:
  Lines(std::string title, std::string x, std::string y)
      : m_title(std::move(title)), m_x(std::move(x)), m_y(std::move(y)) {}
  void add(const std::string& series, double x, double y);
  bool empty() const { return m_series.empty(); }
  Json to_json() const;

 private:
  std::string m_title, m_x, m_y;
  std::vector<std::pair<std::string, Json>> m_series;
};

Json make_table(const std::string& title, std::vector<std::string> columns, Json rows);

// The number at `key` of `j`, or 0 when absent or not a number.
double number_at(const Json& j, const char* key);

}  // namespace tessera::htmlreport
