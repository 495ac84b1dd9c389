// Readers and writers of logical graphs.
//
// Formats (docs/mapper.md has examples):
//  - JSON: {"nodes": [{"name", "multicast"?, "capacity"?, "compute"?}, ...] | <count>,
//           "edges": [{"src", "dst", "weight"?}, ...] | [[src, dst, weight?], ...]}
//    Node references are names (strings) or ids (integers). Unknown keys are errors.
//  - Edge list (text): one "src dst [weight]" per line (weight defaults to 1); '#' starts a
//  comment;
//    nodes are created in order of first appearance; a line "%node NAME [multicast] [capacity=C]
//    [compute=T]" declares a node with attributes.
//  - Adjacency matrix (text): n lines of n numbers (spaces or commas); entry (i, j) is the weight
//  of
//    i->j, 0 = no edge; nodes are named "0".."n-1".
// Duplicate-edge policy: a second edge with the same (src, dst) is an error naming both places
// (traffic volumes are never silently summed or overwritten). Errors name file:line (text) or
// file:entry (JSON, e.g. "g.json: edges[3]") and the reason.
#pragma once

#include <string>

#include "mapper/graph.h"

namespace tessera::mapper {

enum class GraphFormat { kAuto, kJson, kEdgeList, kMatrix };

// Parses `format` ("auto", "json", "edges", "matrix"); throws Error naming `key` otherwise.
GraphFormat parse_graph_format(const std::string& format, const std::string& key);

LogicalGraph read_graph(const std::string& path, GraphFormat format = GraphFormat::kAuto);
// The readers on in-memory text; `origin` is used as the file name in errors.
LogicalGraph parse_graph_json(const std::string& text, const std::string& origin);
LogicalGraph parse_edge_list(const std::string& text, const std::string& origin);
LogicalGraph parse_adjacency_matrix(const std::string& text, const std::string& origin);

std::string graph_to_json(const LogicalGraph& graph);
void write_graph(const LogicalGraph& graph, const std::string& path);

}  // namespace tessera::mapper
