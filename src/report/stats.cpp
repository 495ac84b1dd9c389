#include "report/stats.h"

#include <cmath>

#include <fmt/format.h>

#include "common/error.h"

namespace tessera::report {

namespace {

// Splits "a.b.c" into its first component and the rest ("a", "b.c"); rest is empty for a leaf.
std::pair<std::string_view, std::string_view> split_first(std::string_view path) {
  const size_t dot = path.find('.');
  if (dot == std::string_view::npos) return {path, {}};
  return {path.substr(0, dot), path.substr(dot + 1)};
}

void check_name(std::string_view name) {
  if (name.empty() || name.find('.') != std::string_view::npos)
    throw Error("stats",
                fmt::format("invalid counter or group name '{}' (non-empty, no dots)", name));
}

// Integers print without a fraction; other numbers with up to 6 significant digits.
std::string format_value(double value, bool is_int) {
  if (is_int) return fmt::format("{}", static_cast<int64_t>(value));
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e15)
    return fmt::format("{}", static_cast<int64_t>(value));
  return fmt::format("{:.6g}", value);
}

}  // namespace

const StatGroup::Entry* StatGroup::find(std::string_view name) const {
  for (const auto& e : m_entries)
    if (e.name == name) return &e;
  return nullptr;
}

StatGroup::Entry* StatGroup::find(std::string_view name) {
  for (auto& e : m_entries)
    if (e.name == name) return &e;
  return nullptr;
}

void StatGroup::set(std::string_view name, double value, std::string_view unit,
                    std::string_view description) {
  check_name(name);
  Counter c{value, false, std::string(unit), std::string(description)};
  if (Entry* e = find(name)) {
    if (!std::holds_alternative<Counter>(e->item))
      throw Error("stats", fmt::format("'{}' is a group, not a counter", name));
    e->item = std::move(c);
    return;
  }
  m_entries.push_back({std::string(name), std::move(c)});
}

void StatGroup::set_int(std::string_view name, int64_t value, std::string_view unit,
                        std::string_view description) {
  set(name, static_cast<double>(value), unit, description);
  std::get<Counter>(find(name)->item).is_int = true;
}

StatGroup& StatGroup::group(std::string_view name) {
  check_name(name);
  if (Entry* e = find(name)) {
    auto* g = std::get_if<std::unique_ptr<StatGroup>>(&e->item);
    if (!g) throw Error("stats", fmt::format("'{}' is a counter, not a group", name));
    return **g;
  }
  m_entries.push_back({std::string(name), std::make_unique<StatGroup>()});
  return *std::get<std::unique_ptr<StatGroup>>(m_entries.back().item);
}

bool StatGroup::has(std::string_view path) const {
  const auto [head, rest] = split_first(path);
  const Entry* e = find(head);
  if (!e) return false;
  if (rest.empty()) return std::holds_alternative<Counter>(e->item);
  const auto* g = std::get_if<std::unique_ptr<StatGroup>>(&e->item);
  return g && (*g)->has(rest);
}

double StatGroup::get(std::string_view path) const {
  const StatGroup* node = this;
  std::string_view rest = path;
  while (true) {
    const auto [head, tail] = split_first(rest);
    const Entry* e = node->find(head);
    if (!e) break;
    if (tail.empty()) {
      if (const auto* c = std::get_if<Counter>(&e->item)) return c->value;
      break;
    }
    const auto* g = std::get_if<std::unique_ptr<StatGroup>>(&e->item);
    if (!g) break;
    node = g->get();
    rest = tail;
  }
  throw Error("stats", fmt::format("no counter '{}'", path));
}

nlohmann::ordered_json StatGroup::to_json() const {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& e : m_entries) {
    if (const auto* c = std::get_if<Counter>(&e.item)) {
      if (c->is_int)
        out[e.name] = static_cast<int64_t>(c->value);
      else if (std::isfinite(c->value))
        out[e.name] = c->value;
      else
        out[e.name] = nullptr;  // JSON has no NaN/Inf
    } else {
      out[e.name] = std::get<std::unique_ptr<StatGroup>>(e.item)->to_json();
    }
  }
  return out;
}

std::string StatGroup::to_text(int indent) const {
  size_t width = 0;
  for (const auto& e : m_entries)
    if (std::holds_alternative<Counter>(e.item)) width = std::max(width, e.name.size());
  std::string out;
  const std::string pad(static_cast<size_t>(std::max(indent, 0)), ' ');
  for (const auto& e : m_entries) {
    if (const auto* c = std::get_if<Counter>(&e.item)) {
      out += fmt::format("{}{:<{}}  {}", pad, e.name, width, format_value(c->value, c->is_int));
      if (!c->unit.empty()) out += " " + c->unit;
      out += '\n';
    } else {
      out += fmt::format("{}{}:\n", pad, e.name);
      out += std::get<std::unique_ptr<StatGroup>>(e.item)->to_text(indent + 2);
    }
  }
  return out;
}

}  // namespace tessera::report
