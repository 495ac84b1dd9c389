#include "mapper/graph_io.h"

#include <cmath>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file_io.h"
#include "common/json_parse.h"
#include "mapper/system.h"

namespace tessera::mapper {
namespace {

using nlohmann::json;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Re-throws a graph Error from add_node/add_edge with the caller's location.
template <typename F>
auto at(const std::string& where, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    throw Error(where, e.why());
  }
}

void check_keys(const json& obj, std::initializer_list<const char*> allowed,
                const std::string& where) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    for (const char* k : allowed) ok = ok || it.key() == k;
    if (!ok) throw Error(where, fmt::format("unknown key '{}'", it.key()));
  }
}

double json_number(const json& v, const std::string& where, const char* key) {
  if (!v.is_number()) throw Error(where, fmt::format("'{}' must be a number", key));
  return v.get<double>();
}

int json_node_ref(const LogicalGraph& g, const json& v, const std::string& where, const char* key) {
  if (v.is_string()) {
    int id = g.find(v.get<std::string>());
    if (id < 0)
      throw Error(where, fmt::format("unknown node '{}' in '{}'", v.get<std::string>(), key));
    return id;
  }
  if (v.is_number_integer()) {
    long long id = v.get<long long>();
    if (id < 0 || id >= g.num_nodes())
      throw Error(where, fmt::format("unknown node id {} in '{}' (graph has {} nodes)", id, key,
                                     g.num_nodes()));
    return static_cast<int>(id);
  }
  throw Error(where, fmt::format("'{}' must be a node name or id", key));
}

void json_nodes(LogicalGraph& g, const json& nodes, const std::string& origin) {
  if (nodes.is_number_integer()) {
    long long n = nodes.get<long long>();
    if (n < 0 || n > kMaxCores)
      throw Error(origin + ": nodes",
                  fmt::format("bad node count {} (at most {}, the most cores a system may have)", n,
                              kMaxCores));
    for (long long i = 0; i < n; ++i) g.add_node({std::to_string(i)});
    return;
  }
  if (!nodes.is_array()) throw Error(origin + ": nodes", "must be an array or a count");
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::string where = fmt::format("{}: nodes[{}]", origin, i);
    const json& n = nodes[i];
    Node node;
    if (n.is_string()) {
      node.name = n.get<std::string>();
    } else if (n.is_object()) {
      check_keys(n, {"name", "multicast", "capacity", "compute"}, where);
      if (!n.contains("name") || !n["name"].is_string())
        throw Error(where, "'name' (string) is required");
      node.name = n["name"].get<std::string>();
      if (n.contains("multicast")) {
        if (!n["multicast"].is_boolean()) throw Error(where, "'multicast' must be true or false");
        node.multicast = n["multicast"].get<bool>();
      }
      if (n.contains("capacity")) node.capacity = json_number(n["capacity"], where, "capacity");
      if (n.contains("compute")) node.compute = json_number(n["compute"], where, "compute");
    } else {
      throw Error(where, "must be a name or an object");
    }
    at(where, [&] { return g.add_node(node); });
  }
}

void json_edges(LogicalGraph& g, const json& edges, const std::string& origin) {
  if (!edges.is_array()) throw Error(origin + ": edges", "must be an array");
  std::map<std::pair<int, int>, size_t> first;
  for (size_t i = 0; i < edges.size(); ++i) {
    std::string where = fmt::format("{}: edges[{}]", origin, i);
    const json& e = edges[i];
    json src, dst, weight = 1.0;
    if (e.is_array()) {
      if (e.size() < 2 || e.size() > 3)
        throw Error(where, "must be [src, dst] or [src, dst, weight]");
      src = e[0];
      dst = e[1];
      if (e.size() == 3) weight = e[2];
    } else if (e.is_object()) {
      check_keys(e, {"src", "dst", "weight"}, where);
      if (!e.contains("src") || !e.contains("dst"))
        throw Error(where, "'src' and 'dst' are required");
      src = e["src"];
      dst = e["dst"];
      if (e.contains("weight")) weight = e["weight"];
    } else {
      throw Error(where, "must be an object or an array");
    }
    int s = json_node_ref(g, src, where, "src");
    int d = json_node_ref(g, dst, where, "dst");
    double w = weight.is_null() ? NAN : json_number(weight, where, "weight");
    auto [it, fresh] = first.try_emplace({s, d}, i);
    if (!fresh)
      throw Error(
          where,
          fmt::format("duplicate edge {}->{} (first at edges[{}]); duplicates are not merged",
                      g.node(s).name, g.node(d).name, it->second));
    at(where, [&] { return g.add_edge(s, d, w); });
  }
}

// Splits a text line into tokens separated by spaces, tabs or commas; drops a '#' comment.
std::vector<std::string> tokens(const std::string& line) {
  std::string s = line.substr(0, line.find('#'));
  for (char& c : s)
    if (c == ',' || c == '\t' || c == '\r') c = ' ';
  std::istringstream ss(s);
  std::vector<std::string> out;
  std::string t;
  while (ss >> t) out.push_back(t);
  return out;
}

double parse_number(const std::string& tok, const std::string& where) {
  if (tok == "nan" || tok == "NaN" || tok == "NAN") return NAN;
  size_t used = 0;
  double v = 0.0;
  try {
    v = std::stod(tok, &used);
  } catch (const std::exception&) {
    throw Error(where, fmt::format("'{}' is not a number", tok));
  }
  if (used != tok.size()) throw Error(where, fmt::format("'{}' is not a number", tok));
  return v;
}

void parse_node_directive(LogicalGraph& g, const std::vector<std::string>& t,
                          const std::string& where) {
  if (t.size() < 2) throw Error(where, "%node needs a name");
  Node node{t[1]};
  for (size_t i = 2; i < t.size(); ++i) {
    if (t[i] == "multicast") {
      node.multicast = true;
    } else if (t[i].rfind("capacity=", 0) == 0) {
      node.capacity = parse_number(t[i].substr(9), where);
    } else if (t[i].rfind("compute=", 0) == 0) {
      node.compute = parse_number(t[i].substr(8), where);
    } else {
      throw Error(where, fmt::format("unknown %node attribute '{}'", t[i]));
    }
  }
  at(where, [&] { return g.add_node(node); });
}

}  // namespace

GraphFormat parse_graph_format(const std::string& format, const std::string& key) {
  if (format == "auto") return GraphFormat::kAuto;
  if (format == "json") return GraphFormat::kJson;
  if (format == "edges") return GraphFormat::kEdgeList;
  if (format == "matrix") return GraphFormat::kMatrix;
  throw Error(key, fmt::format("unknown graph format '{}' (auto, json, edges, matrix)", format));
}

LogicalGraph parse_graph_json(const std::string& text, const std::string& origin) {
  const json doc = parse_json(text, origin);
  if (!doc.is_object()) throw Error(origin, "top level must be an object with 'nodes' and 'edges'");
  check_keys(doc, {"nodes", "edges", "name", "comment"}, origin);
  if (!doc.contains("nodes")) throw Error(origin, "missing key 'nodes'");
  LogicalGraph g;
  json_nodes(g, doc["nodes"], origin);
  if (doc.contains("edges")) json_edges(g, doc["edges"], origin);
  return g;
}

LogicalGraph parse_edge_list(const std::string& text, const std::string& origin) {
  LogicalGraph g;
  std::map<std::pair<int, int>, int> first;
  std::istringstream in(text);
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    std::string where = fmt::format("{}:{}", origin, lineno);
    auto t = tokens(line);
    if (t.empty()) continue;
    if (t[0] == "%node") {
      parse_node_directive(g, t, where);
      continue;
    }
    if (t.size() < 2 || t.size() > 3) throw Error(where, "expected 'src dst [weight]'");
    int ids[2];
    for (int k = 0; k < 2; ++k) {
      ids[k] = g.find(t[k]);
      if (ids[k] < 0) ids[k] = at(where, [&] { return g.add_node({t[k]}); });
    }
    double w = t.size() == 3 ? parse_number(t[2], where) : 1.0;
    auto [it, fresh] = first.try_emplace({ids[0], ids[1]}, lineno);
    if (!fresh)
      throw Error(where,
                  fmt::format("duplicate edge {}->{} (first at line {}); duplicates are not merged",
                              t[0], t[1], it->second));
    at(where, [&] { return g.add_edge(ids[0], ids[1], w); });
  }
  return g;
}

LogicalGraph parse_adjacency_matrix(const std::string& text, const std::string& origin) {
  std::vector<std::vector<double>> rows;
  std::vector<int> linenos;
  std::istringstream in(text);
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    auto t = tokens(line);
    if (t.empty()) continue;
    std::vector<double> row;
    for (size_t j = 0; j < t.size(); ++j)
      row.push_back(parse_number(t[j], fmt::format("{}:{}: column {}", origin, lineno, j + 1)));
    rows.push_back(std::move(row));
    linenos.push_back(lineno);
  }
  LogicalGraph g;
  const size_t n = rows.size();
  for (size_t i = 0; i < n; ++i) g.add_node({std::to_string(i)});
  for (size_t i = 0; i < n; ++i) {
    std::string where = fmt::format("{}:{}", origin, linenos[i]);
    if (rows[i].size() != n)
      throw Error(where, fmt::format("row has {} entries, expected {} (matrix must be square)",
                                     rows[i].size(), n));
    for (size_t j = 0; j < n; ++j) {
      double w = rows[i][j];
      std::string cell = fmt::format("{}: column {}", where, j + 1);
      if (std::isnan(w)) throw Error(cell, "weight is NaN");
      if (w < 0.0) throw Error(cell, fmt::format("negative weight {}", w));
      if (w == 0.0) continue;
      if (i == j) throw Error(cell, "non-zero diagonal entry (self loop)");
      at(cell, [&] { return g.add_edge(static_cast<int>(i), static_cast<int>(j), w); });
    }
  }
  return g;
}

LogicalGraph read_graph(const std::string& path, GraphFormat format) {
  const std::string text = read_file(path, "graph file");
  if (format == GraphFormat::kAuto) {
    if (ends_with(path, ".json"))
      format = GraphFormat::kJson;
    else if (ends_with(path, ".adj") || ends_with(path, ".csv") || ends_with(path, ".matrix"))
      format = GraphFormat::kMatrix;
    else
      format = GraphFormat::kEdgeList;
  }
  switch (format) {
    case GraphFormat::kJson:
      return parse_graph_json(text, path);
    case GraphFormat::kMatrix:
      return parse_adjacency_matrix(text, path);
    default:
      return parse_edge_list(text, path);
  }
}

std::string graph_to_json(const LogicalGraph& graph) {
  json nodes = json::array();
  for (const Node& n : graph.nodes()) {
    json o = {{"name", n.name}};
    if (n.multicast) o["multicast"] = true;
    if (n.capacity != 1.0) o["capacity"] = n.capacity;
    if (n.compute != 1.0) o["compute"] = n.compute;
    nodes.push_back(o);
  }
  json edges = json::array();
  for (const Edge& e : graph.edges()) edges.push_back({e.src, e.dst, e.weight});
  // Names from text formats may hold bytes that are not UTF-8: written as U+FFFD, never thrown.
  return json{{"nodes", nodes}, {"edges", edges}}.dump(1, ' ', false,
                                                       json::error_handler_t::replace);
}

void write_graph(const LogicalGraph& graph, const std::string& path) {
  write_file(path, graph_to_json(graph) + '\n', "graph file");
}

}  // namespace tessera::mapper
