#include "mapper/graph.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/error.h"

namespace tessera::mapper {

int LogicalGraph::add_node(Node node) {
  if (node.name.empty()) throw Error("graph", "node name is empty");
  if (m_by_name.count(node.name))
    throw Error("graph", fmt::format("duplicate node '{}'", node.name));
  if (!(node.capacity > 0.0 && node.capacity <= 1.0))
    throw Error("graph",
                fmt::format("node '{}': capacity {} is not in (0, 1]", node.name, node.capacity));
  if (!(node.compute >= 0.0) || !std::isfinite(node.compute))
    throw Error("graph", fmt::format("node '{}': compute {} is not a finite value >= 0", node.name,
                                     node.compute));
  int id = num_nodes();
  m_by_name.emplace(node.name, id);
  m_nodes.push_back(std::move(node));
  m_out.emplace_back();
  m_in.emplace_back();
  return id;
}

int LogicalGraph::add_edge(int src, int dst, double weight) {
  if (src < 0 || src >= num_nodes() || dst < 0 || dst >= num_nodes())
    throw Error("graph",
                fmt::format("edge {}->{}: node id out of range [0, {})", src, dst, num_nodes()));
  const std::string& a = m_nodes[src].name;
  const std::string& b = m_nodes[dst].name;
  if (src == dst) throw Error("graph", fmt::format("edge {}->{}: self loop", a, b));
  if (std::isnan(weight)) throw Error("graph", fmt::format("edge {}->{}: weight is NaN", a, b));
  if (!std::isfinite(weight))
    throw Error("graph", fmt::format("edge {}->{}: weight is infinite", a, b));
  if (weight < 0.0)
    throw Error("graph", fmt::format("edge {}->{}: negative weight {}", a, b, weight));
  if (weight == 0.0)
    throw Error("graph", fmt::format("edge {}->{}: zero weight (omit the edge)", a, b));
  long long key = static_cast<long long>(src) * (1LL << 31) + dst;
  if (m_edge_index.count(key))
    throw Error("graph", fmt::format("edge {}->{}: duplicate edge", a, b));
  int id = num_edges();
  m_edge_index.emplace(key, id);
  m_edges.push_back({src, dst, weight});
  m_out[src].push_back({dst, weight, id});
  m_in[dst].push_back({src, weight, id});
  return id;
}

int LogicalGraph::find(const std::string& name) const {
  auto it = m_by_name.find(name);
  return it == m_by_name.end() ? -1 : it->second;
}

double LogicalGraph::total_weight() const {
  double s = 0.0;
  for (const Edge& e : m_edges) s += e.weight;
  return s;
}

std::vector<double> LogicalGraph::interaction_weights() const {
  std::vector<double> w(num_nodes(), 0.0);
  for (const Edge& e : m_edges) {
    w[e.src] += std::fabs(e.weight);
    w[e.dst] += std::fabs(e.weight);
  }
  return w;
}

std::vector<std::vector<Neighbor>> LogicalGraph::undirected() const {
  std::vector<std::map<int, std::pair<double, int>>> acc(num_nodes());
  for (int i = 0; i < num_edges(); ++i) {
    const Edge& e = m_edges[i];
    for (auto [a, b] : {std::pair{e.src, e.dst}, std::pair{e.dst, e.src}}) {
      auto [it, fresh] = acc[a].try_emplace(b, 0.0, i);
      it->second.first += e.weight;
    }
  }
  std::vector<std::vector<Neighbor>> adj(num_nodes());
  for (int v = 0; v < num_nodes(); ++v)
    for (auto& [u, we] : acc[v]) adj[v].push_back({u, we.first, we.second});
  return adj;
}

}  // namespace tessera::mapper
