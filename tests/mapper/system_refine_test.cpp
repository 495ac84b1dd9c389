#include "mapper/system_refine.h"

#include <gtest/gtest.h>

#include "mapper/generators.h"
#include "mapper/mapper.h"
#include "mapper/metrics.h"
#include "support/error_of.h"

namespace tessera::mapper {
namespace {

// Nodes in id order on the free cores of processors 0, 1, ... in core order.
std::vector<int> sequential_cores(const SystemSpec& sys, int n) {
  std::vector<int> core;
  for (int c = 0; c < sys.total_cores() && static_cast<int>(core.size()) < n; ++c)
    if (!sys.is_occupied(c)) core.push_back(c);
  return core;
}

SystemRefineOptions options(long long moves, double cross) {
  SystemRefineOptions o;
  o.anneal.max_moves = moves;
  o.anneal.window = 2;
  o.anneal.t_end_ratio = 1e-2;
  o.cross_share = cross;
  o.cross_from = 0.0;
  return o;
}

SystemSpec two_meshes_with_holes() {
  SystemSpec sys = make_system(2, 6, 6);
  for (int c = 0; c < 36; c += 5) sys.occupied[1][c] = true;
  sys.occupied[0][7] = true;
  return sys;
}

TEST(SystemRefine, KeepsAValidPlacementAndNeverCostsMoreThanItsStart) {
  LogicalGraph g = gen_family("dag", 60, 3);
  SystemSpec sys = two_meshes_with_holes();
  std::vector<int> start = sequential_cores(sys, g.num_nodes());
  for (double cross : {0.0, 0.1, 1.0}) {
    auto a = refine_system(g, sys, start, options(30000, cross));
    EXPECT_EQ(count_capacity_violations(sys, a), 0);
    EXPECT_LT(placement_cost(g, sys, a), placement_cost(g, sys, start));
  }
}

TEST(SystemRefine, IsDeterministicForAMoveBudget) {
  LogicalGraph g = gen_family("mlp", 60, 2);
  SystemSpec sys = two_meshes_with_holes();
  std::vector<int> start = sequential_cores(sys, g.num_nodes());
  EXPECT_EQ(refine_system(g, sys, start, options(20000, 0.2)),
            refine_system(g, sys, start, options(20000, 0.2)));
}

TEST(SystemRefine, WithoutCrossMovesEveryNodeStaysOnItsProcessor) {
  LogicalGraph g = gen_family("random", 60, 1);
  SystemSpec sys = two_meshes_with_holes();
  std::vector<int> start = sequential_cores(sys, g.num_nodes());
  auto a = refine_system(g, sys, start, options(20000, 0.0));
  for (int v = 0; v < g.num_nodes(); ++v)
    EXPECT_EQ(sys.processor_of(a[v]), sys.processor_of(start[v]));
}

TEST(SystemRefine, CrossMovesBringAStrandedNodeToItsNeighbours) {
  // Node 0 talks (weight 5) to nodes 1 and 2 on processor 1; it starts alone on processor 0, so its
  // edges cost 2 x 5 x 4 (inter factor) = 40. Next to its neighbours it costs at most 5 x 1 + 5
  // x 2.
  LogicalGraph g;
  for (int i = 0; i < 3; ++i) g.add_node({std::to_string(i)});
  g.add_edge(0, 1, 5.0);
  g.add_edge(2, 0, 5.0);
  SystemSpec sys = make_system(2, 4, 4);
  std::vector<int> start = {0, sys.core_id(1, 1, 1), sys.core_id(1, 3, 1)};
  ASSERT_DOUBLE_EQ(placement_cost(g, sys, start), 40.0);
  SystemRefineOptions o = options(2000, 0.5);
  o.anneal.t_start = 1e-9;
  auto a = refine_system(g, sys, start, o);
  EXPECT_EQ(sys.processor_of(a[0]), 1);
  EXPECT_LE(placement_cost(g, sys, a), 15.0);
  EXPECT_EQ(count_capacity_violations(sys, a), 0);
}

TEST(SystemRefine, ChargesProcessorHopsOnAProcessorMesh) {
  // On a 3x1 processor mesh an edge between processors 0 and 2 costs 2 hops x 4; the refinement
  // must bring the two ends to one processor (any on-chip distance on a 2x2 mesh is at most 2).
  LogicalGraph g;
  for (int i = 0; i < 2; ++i) g.add_node({std::to_string(i)});
  g.add_edge(0, 1, 1.0);
  SystemSpec sys = make_system(3, 2, 2, Interconnect::kMesh);
  std::vector<int> start = {sys.core_id(0, 0, 0), sys.core_id(2, 1, 1)};
  ASSERT_DOUBLE_EQ(placement_cost(g, sys, start), 8.0);
  SystemRefineOptions o = options(2000, 1.0);
  o.anneal.t_start = 1e-9;
  auto a = refine_system(g, sys, start, o);
  EXPECT_EQ(sys.processor_of(a[0]), sys.processor_of(a[1]));
  EXPECT_LE(placement_cost(g, sys, a), 2.0);
}

TEST(SystemRefine, UniformWholeSystemMovesImproveARandomStartAndCrossProcessors) {
  LogicalGraph g = gen_family("planted", 60, 4);
  SystemSpec sys = two_meshes_with_holes();
  std::vector<int> start = sequential_cores(sys, g.num_nodes());
  SystemRefineOptions o = options(30000, 0.0);
  o.anneal.window = 0;
  o.anneal.t_end_ratio = 1e-3;
  o.cross_t_ratio = 1.0;
  auto a = refine_system(g, sys, start, o);
  EXPECT_EQ(count_capacity_violations(sys, a), 0);
  EXPECT_LT(placement_cost(g, sys, a), 0.8 * placement_cost(g, sys, start));
  int moved = 0;
  for (int v = 0; v < g.num_nodes(); ++v)
    moved += sys.processor_of(a[v]) != sys.processor_of(start[v]);
  EXPECT_GT(moved, 0);
  EXPECT_EQ(a, refine_system(g, sys, start, o));
}

TEST(SystemRefine, BadOptions_bad) {
  LogicalGraph g = gen_family("dag", 20, 1);
  SystemSpec sys = make_system(1, 8, 8);
  std::vector<int> start = sequential_cores(sys, g.num_nodes());
  EXPECT_EQ(testing::error_of([&] { refine_system(g, sys, start, options(10, 1.5)); }),
            "refine_system: cross share 1.5 is not in [0, 1]");
  SystemRefineOptions o = options(10, 0.1);
  o.anneal.window = -1;
  EXPECT_EQ(testing::error_of([&] { refine_system(g, sys, start, o); }),
            "refine_system: the move window must be >= 0");
}

TEST(SystemRefine, MapGraphWithSystemScopeIsValidDeterministicAndBeatsItsStart) {
  LogicalGraph g = gen_family("mlp", 120, 1);
  SystemSpec sys = make_system(2, 8, 8);
  MapOptions opt;
  opt.method = "greedy+refine";
  opt.anneal_moves_per_node = 300;
  MapResult a = map_graph(g, sys, opt);
  EXPECT_EQ(a.metrics.capacity_violations, 0);
  EXPECT_TRUE(a.metrics.deadlock_free);
  EXPECT_EQ(a.core, map_graph(g, sys, opt).core);
  for (int v = 0; v < g.num_nodes(); ++v) EXPECT_EQ(a.proc[v], sys.processor_of(a.core[v]));
  opt.method = "greedy";
  EXPECT_LT(a.metrics.cost_total, map_graph(g, sys, opt).metrics.cost_total);
}

}  // namespace
}  // namespace tessera::mapper
