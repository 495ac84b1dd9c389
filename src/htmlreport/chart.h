// The chart descriptions a section hands to the page's script (assets/report.js), which draws
// each by its "type":
//   bars:     {"type": "bars", "title", "unit", "categories": [..], "series": [{"name", "values"}]}
//             grouped bars, one group per category, one bar per series (a run, or a quantity);
//             with "stacked": true, one bar per category, the series stacked; with "log": true,
//             on a logarithmic axis;
//   lines:    {"type": "lines", "title", "x", "y", "series": [{"name", "points": [[x, y], ..]}]};
//   table:    {"type": "table", "title", "columns": [..], "rows": [[..], ..]};
//   facts:    {"type": "facts", "title", "runs": [..], "rows": [{"key", "label", "unit",
//             "values": [v or null per run]}]}: a key/value table, values also as data- attributes;
//   topology, mesh, timeline: see section_many_chip.h, section_mapper.h, timeline.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::htmlreport {

using Json = nlohmann::ordered_json;

// A section of the page: {"id", "title", "charts": [..]}.
Json make_section(const std::string& id, const std::string& title, Json charts);

// How bars are drawn: grouped on a linear axis, stacked ("stacked": true: one bar per category,
// the series' values on top of each other in series order), or grouped on a logarithmic axis
// ("log": true; values <= 0 are not drawn).
enum class BarLayout { kGrouped, kStacked, kLog };

// Bars built value by value: categories and series keep their order of first use; a missing
// (series, category) value is 0.
class Bars {
 public:
  Bars(std::string title, std::string unit, BarLayout layout = BarLayout::kGrouped)
      : m_title(std::move(title)), m_unit(std::move(unit)), m_layout(layout) {}
  void add(const std::string& series, const std::string& category, double value);
  bool empty() const { return m_series.empty(); }
  Json to_json() const;

 private:
  std::string m_title, m_unit;
  BarLayout m_layout;
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

// Reading a report that may lack any field or hold the wrong type in it (a tagged file is still
// user input): never operator[] on a const Json, which is undefined for a missing key.
// The number at `key` of `j`, or 0 when `j` is not an object, the key is absent or not a number.
double number_at(const Json& j, const char* key);
// True if v is an integer in [lo, hi] (false for NaN): a double that converts to int64_t exactly.
bool integral_within(double v, double lo, double hi);
// A count or index field: its value if it is an integer in [0, limit], else 0 (as number_at gives
// for a missing field), so that no out-of-range number reaches an integer conversion.
int64_t count_at(const Json& j, const char* key, int64_t limit = int64_t{1} << 53);
// `v` if it is a number, else 0.
double number_of(const Json& v);
// The value at `key` of `j`, or null.
const Json& field(const Json& j, const char* key);
// The array at `key` of `j`, or an empty array.
const Json& list_at(const Json& j, const char* key);
// The string at `key` of `j`, or `fallback`.
std::string text_at(const Json& j, const char* key, const char* fallback = "?");
// The last element of the array at `key` of `j`, or null.
const Json& last_of(const Json& j, const char* key);

}  // namespace tessera::htmlreport
