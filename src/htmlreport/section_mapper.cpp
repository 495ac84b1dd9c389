// The mapper: a placement (`map --out`) drawn as its mesh, one panel per processor, cores
// coloured by the community of their node in the logical graph (the placement's "community"; by
// processor in a placement without it) and each directed on-chip link coloured by the number of
// routes crossing it (counted from the "routes" hop strings; E x+1, W x-1, N y-1, S y+1). Chart:
//   {"type": "mesh", "title", "processors", "width", "height", "colour_by": "community" |
//    "processor", "cells": [{"processor", "x", "y", "label", "community" (-1: none)}],
//    "links": [{"processor", "x", "y", "dir", "value"}]}
// A suite benchmark (`map bench --out`) gives bars of each method's mean cost relative to the
// best method of the family.
#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "htmlreport/sections.h"

namespace tessera::htmlreport {
namespace {

// A core coordinate or processor index: non-negative and small enough to draw (else 0).
int coordinate(const Json& j, const char* key) {
  const double v = number_at(j, key);
  return v >= 0 && v < 4096 ? static_cast<int>(v) : 0;
}

Json mesh_chart(const Input& i) {
  const Json& d = i.data;
  std::map<std::string, std::pair<int, int>> where;
  Json cells = Json::array();
  int width = 1, height = 1, processors = 1;
  bool communities = true;
  for (const Json& p : list_at(d, "placement")) {
    const int x = coordinate(p, "x"), y = coordinate(p, "y"),
              processor = coordinate(p, "processor");
    constexpr int64_t kMaxCommunity = int64_t{1} << 31;
    const Json& c = field(p, "community");
    const bool has_community = c.is_number() && integral_within(c.get<double>(), 0, kMaxCommunity);
    communities = communities && has_community;
    where[text_at(p, "node", "")] = {x, y};
    width = std::max(width, x + 1);
    height = std::max(height, y + 1);
    processors = std::max(processors, processor + 1);
    cells.push_back({{"processor", processor},
                     {"x", x},
                     {"y", y},
                     {"label", text_at(p, "node")},
                     {"community", has_community ? count_at(p, "community", kMaxCommunity) : -1}});
  }
  std::map<std::tuple<int, int, int, char>, int> load;
  for (const Json& r : list_at(d, "routes")) {
    auto [x, y] = where[text_at(r, "src", "")];
    for (char h : text_at(r, "hops", "")) {
      if (std::string_view("EWNS").find(h) == std::string_view::npos) break;
      ++load[{coordinate(r, "processor"), x, y, h}];
      x += h == 'E' ? 1 : h == 'W' ? -1 : 0;
      y += h == 'S' ? 1 : h == 'N' ? -1 : 0;
    }
  }
  Json links = Json::array();
  for (const auto& [k, n] : load) {
    const auto& [p, x, y, dir] = k;
    links.push_back(
        {{"processor", p}, {"x", x}, {"y", y}, {"dir", std::string(1, dir)}, {"value", n}});
  }
  const char* colour_by = communities && !cells.empty() ? "community" : "processor";
  return Json{
      {"type", "mesh"},
      {"title", fmt::format("{}: routes per link, cores coloured by {}", i.label, colour_by)},
      {"processors", processors},
      {"width", width},
      {"height", height},
      {"colour_by", colour_by},
      {"cells", std::move(cells)},
      {"links", std::move(links)}};
}

Json bench_chart(const Input& i) {
  // family -> method -> (sum of costs, count)
  std::map<std::string, std::map<std::string, std::pair<double, int>>> cost;
  std::vector<std::string> methods;
  for (const Json& r : list_at(i.data, "results")) {
    const std::string m = text_at(r, "method");
    if (std::find(methods.begin(), methods.end(), m) == methods.end()) methods.push_back(m);
    auto& c = cost[text_at(r, "family")][m];
    c.first += number_at(r, "cost");
    ++c.second;
  }
  Bars bars(i.label + ": mean cost relative to the family's best method", "x");
  for (const auto& [family, by_method] : cost) {
    double best = 0;
    for (const auto& [m, c] : by_method)
      if (const double mean = c.first / c.second; best == 0 || mean < best) best = mean;
    for (const std::string& m : methods)
      if (auto it = by_method.find(m); it != by_method.end() && best > 0)
        bars.add(family, m, it->second.first / it->second.second / best);
  }
  return bars.empty() ? Json(nullptr) : bars.to_json();
}

}  // namespace

Json mapper_section(const std::vector<Input>& in) {
  Json charts = Json::array(), rows = Json::array();
  for (const Input& i : in) {
    if (i.kind == Kind::kMap) {
      charts.push_back(mesh_chart(i));
      const Json& m = field(i.data, "metrics");
      rows.push_back({i.label, text_at(i.data, "method"), text_at(i.data, "routing"),
                      number_at(m, "cost_total"), number_at(m, "max_link_load"),
                      number_at(m, "cut"), field(m, "deadlock_free")});
    } else if (i.kind == Kind::kMapBench) {
      if (Json b = bench_chart(i); !b.is_null()) charts.push_back(std::move(b));
    }
  }
  if (charts.empty()) return nullptr;
  if (!rows.empty())
    charts.push_back(make_table(
        "Placements", {"run", "method", "routing", "cost", "max link load", "cut", "deadlock-free"},
        std::move(rows)));
  return make_section("mapper", "Mapper", std::move(charts));
}

}  // namespace tessera::htmlreport
