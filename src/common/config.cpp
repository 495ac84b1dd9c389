#include "common/config.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "common/error.h"
#include "common/file_io.h"
#include "common/json_parse.h"

namespace tessera {

namespace {

std::vector<std::string> split_key(std::string_view key) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = key.find('.', start);
    parts.emplace_back(key.substr(start, dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] =
          std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

void collect_leaf_keys(const nlohmann::json& node, const std::string& prefix,
                       std::vector<std::string>& out) {
  if (!node.is_object()) {
    out.push_back(prefix);
    return;
  }
  for (const auto& [k, v] : node.items())
    collect_leaf_keys(v, prefix.empty() ? k : prefix + "." + k, out);
}

std::string json_type_name(const nlohmann::json& j) {
  return j.type_name();
}

}  // namespace

ConfigReader::ConfigReader(nlohmann::json root, std::string source)
    : m_root(std::move(root)), m_source(std::move(source)) {
  if (!m_root.is_object()) throw Error(m_source, "a config must be a JSON object at the top level");
}

ConfigReader ConfigReader::schema() {
  ConfigReader r(nlohmann::json::object(), "<schema>");
  r.m_schema = true;
  return r;
}

ConfigReader ConfigReader::from_string(std::string_view text, std::string source) {
  nlohmann::json j = parse_json(text, source, /*comments=*/true);
  return ConfigReader(std::move(j), std::move(source));
}

ConfigReader ConfigReader::from_file(const std::string& path) {
  return from_string(read_file(path, "config file"), path);
}

const nlohmann::json* ConfigReader::find(std::string_view key) const {
  const nlohmann::json* node = &m_root;
  for (const auto& part : split_key(key)) {
    if (!node->is_object()) return nullptr;
    auto it = node->find(part);
    if (it == node->end()) return nullptr;
    node = &*it;
  }
  return node;
}

void ConfigReader::declare(ParamDecl d) {
  for (auto& existing : m_decls)
    if (existing.key == d.key) {
      existing = std::move(d);
      return;
    }
  m_decls.push_back(std::move(d));
}

void ConfigReader::fail(std::string_view key, const std::string& why) const {
  throw Error(fmt::format("{}: key '{}'", m_source, key), why);
}

void ConfigReader::require(bool ok, std::string_view key, std::string_view why) const {
  if (!ok) fail(key, std::string(why));
}

int64_t ConfigReader::get_int(std::string_view key, int64_t def, Range<int64_t> range,
                              std::string_view unit, std::string_view description) {
  declare({std::string(key), "int", std::to_string(def), std::string(unit),
           fmt::format("[{}, {}]", range.min, range.max), std::string(description)});
  const nlohmann::json* v = find(key);
  if (!v) return def;
  // An integer above int64_t's range is out of range, not wrapped around.
  const bool too_big = v->is_number_unsigned() && v->get<uint64_t>() > uint64_t{INT64_MAX};
  int64_t value = 0;
  if (too_big) {
    value = INT64_MAX;
  } else if (v->is_number_integer()) {
    value = v->get<int64_t>();
  } else if (v->is_number_float() && std::isfinite(v->get<double>()) &&
             std::floor(v->get<double>()) == v->get<double>() &&
             std::fabs(v->get<double>()) < 9e18) {
    value = static_cast<int64_t>(v->get<double>());
  } else {
    fail(key, fmt::format("expected an integer, got {} {}", json_type_name(*v), v->dump()));
  }
  if (too_big || value < range.min || value > range.max)
    fail(key, fmt::format("value {} is out of range [{}, {}]{}",
                          too_big ? v->dump() : std::to_string(value), range.min, range.max,
                          unit.empty() ? "" : fmt::format(" ({})", unit)));
  return value;
}

double ConfigReader::get_float(std::string_view key, double def, Range<double> range,
                               std::string_view unit, std::string_view description) {
  declare({std::string(key), "float", fmt::format("{}", def), std::string(unit),
           fmt::format("[{}, {}]", range.min, range.max), std::string(description)});
  const nlohmann::json* v = find(key);
  if (!v) return def;
  if (!v->is_number())
    fail(key, fmt::format("expected a number, got {} {}", json_type_name(*v), v->dump()));
  const double value = v->get<double>();
  if (!std::isfinite(value) || value < range.min || value > range.max)
    fail(key, fmt::format("value {} is out of range [{}, {}]{}", value, range.min, range.max,
                          unit.empty() ? "" : fmt::format(" ({})", unit)));
  return value;
}

bool ConfigReader::get_bool(std::string_view key, bool def, std::string_view description) {
  declare({std::string(key), "bool", def ? "true" : "false", "", "true | false",
           std::string(description)});
  const nlohmann::json* v = find(key);
  if (!v) return def;
  if (!v->is_boolean()) fail(key, fmt::format("expected true or false, got {}", v->dump()));
  return v->get<bool>();
}

std::string ConfigReader::get_string(std::string_view key, std::string def,
                                     std::vector<std::string> choices,
                                     std::string_view description) {
  std::string range = choices.empty() ? "any string" : "one of: ";
  for (size_t i = 0; i < choices.size(); ++i) range += (i ? ", " : "") + choices[i];
  declare({std::string(key), "string", def, "", range, std::string(description)});
  const nlohmann::json* v = find(key);
  if (!v) return def;
  if (!v->is_string()) fail(key, fmt::format("expected a string, got {}", v->dump()));
  std::string value = v->get<std::string>();
  if (!choices.empty() && std::find(choices.begin(), choices.end(), value) == choices.end())
    fail(key, fmt::format("'{}' is not {}", value, range));
  return value;
}

void ConfigReader::finish() const {
  std::vector<std::string> present;
  collect_leaf_keys(m_root, "", present);
  std::set<std::string> known;
  for (const auto& d : m_decls) known.insert(d.key);
  for (const auto& key : present) {
    if (key.empty() || known.count(key)) continue;
    // A leaf that is a prefix of a declared key (e.g. "mxu": 3) has the wrong shape.
    std::string closest;
    size_t best = SIZE_MAX;
    for (const auto& k : known) {
      const size_t dist = edit_distance(key, k);
      if (dist < best) best = dist, closest = k;
    }
    if (best <= std::max<size_t>(2, key.size() / 4))
      fail(key, fmt::format("unknown key (did you mean '{}'?)", closest));
    fail(key, "unknown key (see `tessera config --schema` for every key)");
  }
}

std::string schema_to_text(const std::vector<ParamDecl>& decls) {
  size_t wk = 3, wt = 4, wd = 7, wu = 4;
  for (const auto& d : decls) {
    wk = std::max(wk, d.key.size());
    wt = std::max(wt, d.type.size());
    wd = std::max(wd, d.default_value.size());
    wu = std::max(wu, d.unit.size());
  }
  std::string out = fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<{}}  {}\n", "key", wk, "type", wt,
                                "default", wd, "unit", wu, "range / description");
  for (const auto& d : decls)
    out += fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<{}}  {} {}\n", d.key, wk, d.type, wt,
                       d.default_value, wd, d.unit, wu, d.range, d.description);
  return out;
}

nlohmann::json schema_to_json(const std::vector<ParamDecl>& decls) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& d : decls)
    arr.push_back({{"key", d.key},
                   {"type", d.type},
                   {"default", d.default_value},
                   {"unit", d.unit},
                   {"range", d.range},
                   {"description", d.description}});
  return arr;
}

}  // namespace tessera
