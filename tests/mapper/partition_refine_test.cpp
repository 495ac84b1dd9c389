#include "mapper/partition_refine.h"

#include <string>

#include <gtest/gtest.h>

#include "mapper/communities.h"
#include "mapper/generators.h"

namespace tessera::mapper {
namespace {

// Two 6-cliques (weight 1 per edge) joined by one edge of weight 0.5 between nodes 5 and 6.
LogicalGraph two_cliques() {
  LogicalGraph g;
  for (int i = 0; i < 12; ++i) g.add_node({std::to_string(i)});
  for (int base : {0, 6})
    for (int i = 0; i < 6; ++i)
      for (int j = i + 1; j < 6; ++j) g.add_edge(base + i, base + j, 1.0);
  g.add_edge(5, 6, 0.5);
  return g;
}

std::vector<int> loads(const std::vector<int>& proc, int parts) {
  std::vector<int> l(parts, 0);
  for (int p : proc) ++l[p];
  return l;
}

TEST(PartitionRefine, SwapsMisplacedNodesBackThroughASpareCore) {
  LogicalGraph g = two_cliques();
  SystemSpec sys = make_system(2, 7, 1);  // 7 cores each: one spare core per processor
  std::vector<int> proc = {0, 0, 0, 0, 0, 1, 0, 1, 1, 1, 1, 1};  // nodes 5 and 6 swapped
  RefineStats st = refine_partition(g, sys, {7, 7}, proc);
  EXPECT_DOUBLE_EQ(st.before, 10.5);  // 5 + 5 clique edges cut, plus the bridge
  EXPECT_DOUBLE_EQ(st.after, 0.5);
  EXPECT_EQ(proc, (std::vector<int>{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(st.moves, 2);
}

TEST(PartitionRefine, NeverFillsAProcessorBeyondItsFreeCores) {
  LogicalGraph g = two_cliques();
  SystemSpec sys = make_system(2, 6, 1);  // no spare core: no move is possible
  std::vector<int> proc = {0, 0, 0, 0, 0, 1, 0, 1, 1, 1, 1, 1};
  RefineStats st = refine_partition(g, sys, {6, 6}, proc);
  EXPECT_DOUBLE_EQ(st.after, st.before);
  EXPECT_EQ(proc, (std::vector<int>{0, 0, 0, 0, 0, 1, 0, 1, 1, 1, 1, 1}));
}

TEST(PartitionRefine, WeighsProcessorHopsOnAProcessorMesh) {
  // Processors 0 - 1 - 2 in a row. Node 3 talks to nodes 0..2 (on processor 0) with weight 1 each;
  // on processor 2 it costs 3 x 2 hops, on processor 1 3 x 1, on processor 0 nothing.
  LogicalGraph g;
  for (int i = 0; i < 4; ++i) g.add_node({std::to_string(i)});
  for (int i = 0; i < 3; ++i) g.add_edge(i, 3, 1.0);
  SystemSpec sys = make_system(3, 2, 2, Interconnect::kMesh);
  ASSERT_EQ(sys.processor_hops(0, 2), 2);
  std::vector<int> proc = {0, 0, 0, 2};
  RefineStats st = refine_partition(g, sys, {4, 4, 4}, proc);
  EXPECT_DOUBLE_EQ(st.before, 6.0);
  EXPECT_DOUBLE_EQ(st.after, 0.0);
  EXPECT_EQ(proc[3], 0);
}

TEST(PartitionRefine, LowersTheLouvainCutWithinCapacityAndTheStageKeepsTheCheaperAssignment) {
  SystemSpec sys = make_system(4, 12, 12);
  for (int c = 0; c < 30; ++c) sys.occupied[2][c] = true;
  std::vector<int> cap = {144, 144, 114, 144};
  for (const std::string fam : {"mlp"}) {
    LogicalGraph g = gen_family(fam, 480, 1);
    std::vector<int> plain = processor_stage_louvain(g, sys, 1, false);
    std::vector<int> refined = plain;
    RefineStats st = refine_partition(g, sys, cap, refined);
    EXPECT_DOUBLE_EQ(st.before, inter_processor_cost(g, sys, plain));
    EXPECT_LT(st.after, st.before) << fam;
    EXPECT_DOUBLE_EQ(st.after, inter_processor_cost(g, sys, refined));
    auto l = loads(refined, 4);
    for (int p = 0; p < 4; ++p) EXPECT_LE(l[p], cap[p]) << fam;
    // The stage keeps the refined or the plain assignment, whichever is estimated cheaper once
    // placed.
    std::vector<int> stage = processor_stage_louvain(g, sys, 1);
    l = loads(stage, 4);
    for (int p = 0; p < 4; ++p) EXPECT_LE(l[p], cap[p]) << fam;
    EXPECT_LE(placed_cost_estimate(g, sys, stage), placed_cost_estimate(g, sys, plain)) << fam;
    EXPECT_EQ(processor_stage_louvain(g, sys, 1), stage) << fam;
  }
}

}  // namespace
}  // namespace tessera::mapper
