// Property: whatever bytes the readers get, they return a graph/system or throw tessera::Error -
// never another exception type and never a crash. Deterministic byte mutations of valid inputs.
#include <gtest/gtest.h>

#include "common/error.h"
#include "mapper/graph_io.h"
#include "mapper/rng.h"
#include "mapper/system.h"

namespace tessera::mapper {
namespace {

template <typename F>
void mutate_and_parse(const std::string& valid, F parse, uint64_t seed) {
  static const char kBytes[] = "{}[]\",:-0123456789.eE \n#%abnxyzt";
  Rng rng(seed);
  for (int round = 0; round < 300; ++round) {
    std::string s = valid;
    int edits = 1 + rng.below(4);
    for (int k = 0; k < edits && !s.empty(); ++k) {
      size_t at = static_cast<size_t>(rng.below(static_cast<int>(s.size())));
      switch (rng.below(3)) {
        case 0:
          s[at] = kBytes[rng.below(sizeof(kBytes) - 1)];
          break;
        case 1:
          s.erase(at, 1);
          break;
        default:
          s.insert(at, 1, kBytes[rng.below(sizeof(kBytes) - 1)]);
      }
    }
    try {
      parse(s);
    } catch (const Error&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << "non-tessera exception '" << e.what() << "' for input:\n" << s;
    }
  }
}

TEST(ParserRobustness, MutatedGraphJsonOnlyEverThrowsTesseraErrors_bad) {
  mutate_and_parse(R"({"nodes": [{"name": "a", "multicast": true, "capacity": 0.5}, "b", "c"],
                       "edges": [{"src": "a", "dst": "b", "weight": 2}, ["a", 2, 3.5], [1, "c"]]})",
                   [](const std::string& s) { parse_graph_json(s, "g.json"); }, 1);
}

TEST(ParserRobustness, MutatedEdgeListsAndMatricesOnlyEverThrowTesseraErrors_bad) {
  mutate_and_parse(
      "%node a multicast capacity=0.5\na b 2\nb c 1e3\n# x\n",
      [](const std::string& s) { parse_edge_list(s, "g.txt"); }, 2);
  mutate_and_parse(
      "0 1 0\n0 0 2.5\n1, 0, 0\n", [](const std::string& s) { parse_adjacency_matrix(s, "m.adj"); },
      3);
}

TEST(ParserRobustness, MutatedSystemsOnlyEverThrowTesseraErrors_bad) {
  mutate_and_parse(
      R"({"processors": 2, "mesh": [4, 3], "interconnect": "mesh", "processor_mesh": [2, 1],
                       "occupied": [{"processor": 1, "cores": [[0, 0], [3, 2]]}], "link_bandwidth": 2})",
      [](const std::string& s) { parse_system_json(s, "s.json"); }, 4);
}

}  // namespace
}  // namespace tessera::mapper
