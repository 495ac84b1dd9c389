#include "htmlreport/chart.h"

#include <algorithm>
#include <cmath>

namespace tessera::htmlreport {
namespace {

template <class T, class Key>
auto& find_or_add(std::vector<std::pair<std::string, T>>& v, const Key& key) {
  auto it = std::find_if(v.begin(), v.end(), [&](const auto& p) { return p.first == key; });
  if (it != v.end()) return it->second;
  v.emplace_back(key, T{});
  return v.back().second;
}

}  // namespace

Json make_section(const std::string& id, const std::string& title, Json charts) {
  return Json{{"id", id}, {"title", title}, {"charts", std::move(charts)}};
}

void Bars::add(const std::string& series, const std::string& category, double value) {
  auto c = std::find(m_categories.begin(), m_categories.end(), category);
  const size_t index = static_cast<size_t>(c - m_categories.begin());
  if (c == m_categories.end()) m_categories.push_back(category);
  find_or_add(m_series, series).emplace_back(index, value);
}

Json Bars::to_json() const {
  Json series = Json::array();
  for (const auto& [name, values] : m_series) {
    std::vector<double> v(m_categories.size(), 0.0);
    for (const auto& [i, x] : values) v[i] = x;
    series.push_back({{"name", name}, {"values", v}});
  }
  Json j{{"type", "bars"},
         {"title", m_title},
         {"unit", m_unit},
         {"categories", m_categories},
         {"series", std::move(series)}};
  if (m_layout == BarLayout::kStacked) j["stacked"] = true;
  if (m_layout == BarLayout::kLog) j["log"] = true;
  return j;
}

void Lines::add(const std::string& series, double x, double y) {
  Json& points = find_or_add(m_series, series);
  if (points.is_null()) points = Json::array();
  points.push_back({x, y});
}

Json Lines::to_json() const {
  Json series = Json::array();
  for (const auto& [name, points] : m_series)
    series.push_back({{"name", name}, {"points", points}});
  return Json{
      {"type", "lines"}, {"title", m_title}, {"x", m_x}, {"y", m_y}, {"series", std::move(series)}};
}

Json make_table(const std::string& title, std::vector<std::string> columns, Json rows) {
  return Json{{"type", "table"}, {"title", title}, {"columns", columns}, {"rows", std::move(rows)}};
}

double number_of(const Json& v) {
  return v.is_number() ? v.get<double>() : 0.0;
}

double number_at(const Json& j, const char* key) {
  return number_of(field(j, key));
}

bool integral_within(double v, double lo, double hi) {
  return v >= lo && v <= hi && v == std::trunc(v);
}

int64_t count_at(const Json& j, const char* key, int64_t limit) {
  const double v = number_at(j, key);
  return integral_within(v, 0, static_cast<double>(limit)) ? static_cast<int64_t>(v) : 0;
}

const Json& field(const Json& j, const char* key) {
  static const Json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it != j.end() ? *it : kNull;
}

const Json& list_at(const Json& j, const char* key) {
  static const Json kEmpty = Json::array();
  const Json& v = field(j, key);
  return v.is_array() ? v : kEmpty;
}

std::string text_at(const Json& j, const char* key, const char* fallback) {
  const Json& v = field(j, key);
  return v.is_string() ? v.get<std::string>() : fallback;
}

const Json& last_of(const Json& j, const char* key) {
  static const Json kNull;
  const Json& v = list_at(j, key);
  return v.empty() ? kNull : v.back();
}

}  // namespace tessera::htmlreport
