// libFuzzer target: arbitrary bytes as a mapper graph in each format (JSON, edge list, adjacency
// matrix).
// Properties: every reader ends normally or with a tessera::Error (fuzz_support.h); a graph read
// from any format and written by graph_to_json reads back (when it does) with the same nodes and
// edges.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "mapper/graph_io.h"

namespace {

using namespace tessera;

// Names that are not UTF-8 are written as U+FFFD, so two of them may read back as duplicates (an
// error); any other graph reads back with the same nodes and edges.
void round_trip(const mapper::LogicalGraph& g) {
  mapper::LogicalGraph back;
  if (fuzz::survives([&] { back = mapper::parse_graph_json(mapper::graph_to_json(g), "back"); }))
    fuzz::check(back.num_nodes() == g.num_nodes() && back.num_edges() == g.num_edges());
}

template <typename Reader>
void read_with(Reader read, const std::string& text) {
  mapper::LogicalGraph g;
  if (fuzz::survives([&] { g = read(text, "fuzz"); })) round_trip(g);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(fuzz::as_text(data, size));
  read_with(mapper::parse_graph_json, text);
  read_with(mapper::parse_edge_list, text);
  read_with(mapper::parse_adjacency_matrix, text);
  return 0;
}
