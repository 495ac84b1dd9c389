// LogicalGraph: the weighted directed graph of logical nodes the mapper places (docs/mapper.md,
// "Inputs").
//
// Contract: nodes are dense ids 0..n-1 with a unique name; edges are directed, weight = traffic
// volume per pass (finite, > 0); no self loops; at most one edge per ordered pair (readers reject
// duplicates, see graph_io.h). Each logical node occupies exactly one core; `capacity` is the
// fraction of that core's storage it uses (0 < capacity <= 1) and `compute` its compute time in
// cycles before it sends its outputs (used by the NoC simulation).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

namespace tessera::mapper {

struct Node {
  std::string name;
  bool multicast = false;
  double capacity = 1.0;
  double compute = 1.0;
};

struct Edge {
  int src = 0;
  int dst = 0;
  double weight = 1.0;
};

// One neighbour in an adjacency list: the other node, the edge weight and the edge index.
struct Neighbor {
  int node = 0;
  double weight = 0.0;
  int edge = 0;
};

class LogicalGraph {
 public:
  // Adds a node; throws Error if the name is empty or already used.
  int add_node(Node node);
  // Adds the edge src->dst; throws Error on bad ids, self loops, duplicates, weight <= 0 or NaN.
  int add_edge(int src, int dst, double weight);

  int num_nodes() const { return static_cast<int>(m_nodes.size()); }
  int num_edges() const { return static_cast<int>(m_edges.size()); }
  const Node& node(int id) const { return m_nodes[id]; }
  const std::vector<Node>& nodes() const { return m_nodes; }
  const std::vector<Edge>& edges() const { return m_edges; }
  const std::vector<Neighbor>& out(int id) const { return m_out[id]; }
  const std::vector<Neighbor>& in(int id) const { return m_in[id]; }
  // Id of the node called `name`, or -1.
  int find(const std::string& name) const;
  // Total weight of all edges.
  double total_weight() const;
  // Symmetric interaction weight of every node: sum of |w| over its in- and out-edges.
  std::vector<double> interaction_weights() const;
  // Undirected neighbour lists with weights of both directions summed (each pair once per side).
  std::vector<std::vector<Neighbor>> undirected() const;

 private:
  std::vector<Node> m_nodes;
  std::vector<Edge> m_edges;
  std::vector<std::vector<Neighbor>> m_out;
  std::vector<std::vector<Neighbor>> m_in;
  std::unordered_map<std::string, int> m_by_name;
  std::unordered_map<long long, int> m_edge_index;
};

}  // namespace tessera::mapper
