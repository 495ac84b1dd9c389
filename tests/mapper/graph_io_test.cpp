#include "mapper/graph_io.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "common/error.h"
#include "support/bad_paths.h"

namespace tessera::mapper {
namespace {

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(GraphIo, JsonReadsNamesIdsAndAttributes) {
  auto g =
      parse_graph_json(R"({"nodes": [{"name": "a", "multicast": true, "capacity": 0.5}, "b", "c"],
                                "edges": [{"src": "a", "dst": "b", "weight": 2}, ["a", 2, 3.5], [1, "c"]]})",
                       "g.json");
  ASSERT_EQ(g.num_nodes(), 3);
  ASSERT_EQ(g.num_edges(), 3);
  EXPECT_TRUE(g.node(0).multicast);
  EXPECT_DOUBLE_EQ(g.node(0).capacity, 0.5);
  EXPECT_DOUBLE_EQ(g.edges()[1].weight, 3.5);
  EXPECT_DOUBLE_EQ(g.edges()[2].weight, 1.0);
}

TEST(GraphIo, JsonBadInputsNameTheEntry_bad) {
  EXPECT_EQ(error_of([] {
              parse_graph_json(R"({"nodes": ["a"], "edges": [["a", "zz", 1]]})", "g.json");
            }),
            "g.json: edges[0]: unknown node 'zz' in 'dst'");
  EXPECT_EQ(error_of([] {
              parse_graph_json(R"({"nodes": ["a", "b"], "edges": [["a", "b", -1]]})", "g.json");
            }),
            "g.json: edges[0]: edge a->b: negative weight -1");
  EXPECT_EQ(error_of([] {
              parse_graph_json(R"({"nodes": ["a", "b"], "edges": [["a", "b"], ["a", "b", 2]]})",
                               "g.json");
            }),
            "g.json: edges[1]: duplicate edge a->b (first at edges[0]); duplicates are not merged");
  EXPECT_EQ(error_of([] { parse_graph_json(R"({"nodes": ["a"], "edgez": []})", "g.json"); }),
            "g.json: unknown key 'edgez'");
  EXPECT_EQ(
      error_of([] { parse_graph_json(R"({"nodes": [{"name": "a", "colour": 1}]})", "g.json"); }),
      "g.json: nodes[0]: unknown key 'colour'");
  EXPECT_EQ(error_of([] { parse_graph_json(R"({"nodes": ["a", "a"]})", "g.json"); }),
            "g.json: nodes[1]: duplicate node 'a'");
}

TEST(GraphIo, EdgeListCreatesNodesInOrderAndReadsDirectives) {
  auto g = parse_edge_list("# comment\n%node x multicast capacity=0.25\ny x 2\nx z\n", "g.txt");
  ASSERT_EQ(g.num_nodes(), 3);
  EXPECT_EQ(g.node(0).name, "x");
  EXPECT_TRUE(g.node(0).multicast);
  EXPECT_EQ(g.node(1).name, "y");
  EXPECT_DOUBLE_EQ(g.edges()[0].weight, 2.0);
}

TEST(GraphIo, EdgeListBadInputsNameTheLine_bad) {
  EXPECT_EQ(error_of([] { parse_edge_list("a b 1\nb c nan\n", "g.txt"); }),
            "g.txt:2: edge b->c: weight is NaN");
  EXPECT_EQ(error_of([] { parse_edge_list("a b 1\n\nb c -2\n", "g.txt"); }),
            "g.txt:3: edge b->c: negative weight -2");
  EXPECT_EQ(error_of([] { parse_edge_list("a b 1\na b 1\n", "g.txt"); }),
            "g.txt:2: duplicate edge a->b (first at line 1); duplicates are not merged");
  EXPECT_EQ(error_of([] { parse_edge_list("a b x1\n", "g.txt"); }),
            "g.txt:1: 'x1' is not a number");
  EXPECT_EQ(error_of([] { parse_edge_list("a\n", "g.txt"); }),
            "g.txt:1: expected 'src dst [weight]'");
  EXPECT_EQ(error_of([] { parse_edge_list("a a 1\n", "g.txt"); }), "g.txt:1: edge a->a: self loop");
}

TEST(GraphIo, MatrixReadsDirectedWeights) {
  auto g = parse_adjacency_matrix("0 2 0\n0 0 1.5\n0, 0, 0\n", "m.adj");
  ASSERT_EQ(g.num_nodes(), 3);
  ASSERT_EQ(g.num_edges(), 2);
  EXPECT_EQ(g.edges()[0].src, 0);
  EXPECT_EQ(g.edges()[0].dst, 1);
  EXPECT_DOUBLE_EQ(g.edges()[1].weight, 1.5);
}

TEST(GraphIo, MatrixBadInputs_bad) {
  EXPECT_EQ(error_of([] { parse_adjacency_matrix("0 1\n0\n", "m.adj"); }),
            "m.adj:2: row has 1 entries, expected 2 (matrix must be square)");
  EXPECT_EQ(error_of([] { parse_adjacency_matrix("0 -1\n0 0\n", "m.adj"); }),
            "m.adj:1: column 2: negative weight -1");
  EXPECT_EQ(error_of([] { parse_adjacency_matrix("0 nan\n0 0\n", "m.adj"); }),
            "m.adj:1: column 2: weight is NaN");
  EXPECT_EQ(error_of([] { parse_adjacency_matrix("1 0\n0 0\n", "m.adj"); }),
            "m.adj:1: column 1: non-zero diagonal entry (self loop)");
}

TEST(GraphIo, JsonRoundTripKeepsTheGraph) {
  auto g = parse_edge_list("%node a multicast compute=3\na b 2\nb c 0.5\n", "g.txt");
  auto h = parse_graph_json(graph_to_json(g), "rt.json");
  ASSERT_EQ(h.num_nodes(), 3);
  EXPECT_TRUE(h.node(0).multicast);
  EXPECT_DOUBLE_EQ(h.node(0).compute, 3.0);
  EXPECT_DOUBLE_EQ(h.edges()[1].weight, 0.5);
}

TEST(GraphIo, NodeCountBeyondTheLargestSystemIsRefusedBeforeAllocating_bad) {
  EXPECT_EQ(error_of([] { parse_graph_json(R"({"nodes": 100000000})", "g.json"); }),
            "g.json: nodes: bad node count 100000000 (at most 16777216, the most cores a system "
            "may have)");
}

TEST(GraphIo, JsonNumberOverflowNamesThePlace_bad) {
  EXPECT_EQ(error_of([] {
              parse_graph_json("{\"nodes\": [\"a\", \"b\"],\n \"edges\": [[\"a\", \"b\", 1e400]]}",
                               "g.json");
            }),
            "g.json:2:23: invalid JSON: number overflow parsing '1e400'");
}

TEST(GraphIo, FilesThatAreDirectoriesOrEmptyAreNamed_bad) {
  const testing::BadPaths bad = testing::bad_paths("mapper-graph");
  EXPECT_EQ(error_of([&] { read_graph(bad.directory); }),
            bad.directory + ": is a directory, not a file");
  EXPECT_EQ(error_of([&] { read_graph(bad.empty); }), bad.empty + ": is empty");
  EXPECT_EQ(error_of([&] { read_graph(bad.missing); }), bad.missing + ": cannot open graph file");
}

TEST(GraphIo, WriteToAFullDiskIsAnError_bad) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  LogicalGraph g;
  g.add_node({"a"});
  EXPECT_EQ(error_of([&] { write_graph(g, "/dev/full"); }),
            "/dev/full: cannot write graph file: No space left on device");
}

}  // namespace
}  // namespace tessera::mapper
