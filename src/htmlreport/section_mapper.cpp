// The mapper: a placement (`map --out`) drawn as its mesh, one panel per processor, cores
// coloured by processor (the community stage's partition) and each directed on-chip link coloured
// by the number of routes crossing it (counted from the "routes" hop strings; E x+1, W x-1,
// N y-1, S y+1). Chart:
//   {"type": "mesh", "title", "processors", "width", "height",
//    "cells": [{"processor", "x", "y", "label"}], "links": [{"processor", "x", "y", "dir",
//    "value"}]}
// A suite benchmark (`map bench --out`) gives bars of each method's mean cost relative to the
// best method of the family.
#include <algorithm>
#include <map>
#include <tuple>

#include "htmlreport/sections.h"

namespace tessera::htmlreport {
namespace {

Json mesh_chart(const Input& i) {
  const Json& d = i.data;
  std::map<std::string, std::pair<int, int>> where;
  Json cells = Json::array();
  int width = 1, height = 1, processors = 1;
  for (const Json& p : d["placement"]) {
    const int x = p.value("x", 0), y = p.value("y", 0);
    where[p.value("node", "")] = {x, y};
    width = std::max(width, x + 1);
    height = std::max(height, y + 1);
    processors = std::max(processors, p.value("processor", 0) + 1);
    cells.push_back({{"processor", p["processor"]}, {"x", x}, {"y", y}, {"label", p["node"]}});
  }
  std::map<std::tuple<int, int, int, char>, int> load;
  for (const Json& r : d.value("routes", Json::array())) {
    auto [x, y] = where[r.value("src", "")];
    for (char h : r.value("hops", std::string())) {
      ++load[{r.value("processor", 0), x, y, h}];
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
  return Json{{"type", "mesh"},
              {"title", i.label + ": routes per link, cores coloured by processor"},
              {"processors", processors},
              {"width", width},
              {"height", height},
              {"cells", std::move(cells)},
              {"links", std::move(links)}};
}

Json bench_chart(const Input& i) {
  // family -> method -> (sum of costs, count)
  std::map<std::string, std::map<std::string, std::pair<double, int>>> cost;
  std::vector<std::string> methods;
  for (const Json& r : i.data["results"]) {
    const std::string m = r.value("method", "?");
    if (std::find(methods.begin(), methods.end(), m) == methods.end()) methods.push_back(m);
    auto& c = cost[r.value("family", "?")][m];
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
      const Json& m = i.data["metrics"];
      rows.push_back({i.label, i.data.value("method", "?"), i.data.value("routing", "?"),
                      number_at(m, "cost_total"), number_at(m, "max_link_load"),
                      number_at(m, "cut"), m.value("deadlock_free", false)});
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
