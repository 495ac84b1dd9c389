#include "mapper/placers.h"

#include <gtest/gtest.h>

#include "mapper/generators.h"

namespace tessera::mapper {
namespace {

CoreProblem path_problem(int n, int w, int h) {
  LogicalGraph g;
  for (int i = 0; i < n; ++i) g.add_node({std::to_string(i)});
  for (int i = 0; i + 1 < n; ++i) g.add_edge(i, i + 1, 1.0);
  return make_core_problem(g, w, h);
}

TEST(Placers, CurveOrdersOnA2x2Mesh) {
  CoreProblem pb = path_problem(4, 2, 2);
  EXPECT_EQ(place_row_major(pb), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(place_snake(pb), (std::vector<int>{0, 1, 3, 2}));
  EXPECT_EQ(place_hilbert(pb), (std::vector<int>{0, 2, 3, 1}));
}

TEST(Placers, ASnakeOrHilbertPathHasUnitHops) {
  CoreProblem pb = path_problem(64, 8, 8);
  EXPECT_DOUBLE_EQ(core_cost(pb, place_snake(pb)), 63.0);
  EXPECT_DOUBLE_EQ(core_cost(pb, place_hilbert(pb)), 63.0);
}

TEST(Placers, EveryPlacerGivesDistinctFreeCoresAroundOccupiedOnes) {
  LogicalGraph g = gen_random_dag(40, 6, 2, 4);
  SystemSpec sys = make_system(1, 7, 7);
  for (int c = 0; c < 49; c += 7) sys.occupied[0][c] = true;
  std::vector<int> proc(40, 0);
  CoreProblem pb = make_core_problem(g, sys, proc, 0);
  AnnealOptions opt;
  opt.max_moves = 20000;
  for (auto pos : {place_random(pb, 1), place_row_major(pb), place_snake(pb), place_hilbert(pb),
                   place_greedy(pb), place_scotch(pb, 1), anneal(pb, place_random(pb, 2), opt)})
    EXPECT_NO_THROW(check_core_placement(pb, pos));
}

TEST(Placers, AnnealingImprovesOnItsStartAndIsDeterministic) {
  LogicalGraph g = gen_family("mlp", 64, 1);
  CoreProblem pb = make_core_problem(g, 8, 8);
  std::vector<int> start = place_random(pb, 3);
  AnnealOptions opt;
  opt.max_moves = 50000;
  auto a = anneal(pb, start, opt);
  EXPECT_LT(core_cost(pb, a), 0.8 * core_cost(pb, start));
  EXPECT_EQ(a, anneal(pb, start, opt));
}

TEST(Placers, WindowedRefinementKeepsAValidPlacementAndNeverWorsensItsStart) {
  LogicalGraph g = gen_family("dag", 48, 2);
  SystemSpec sys = make_system(1, 8, 8);
  for (int c = 0; c < 64; c += 11) sys.occupied[0][c] = true;
  CoreProblem pb = make_core_problem(g, sys, std::vector<int>(g.num_nodes(), 0), 0);
  std::vector<int> start = place_greedy(pb);
  AnnealOptions opt;
  opt.max_moves = 20000;
  opt.window = 2;
  opt.t_scale = 0.3;
  for (WindowCentre centre : {WindowCentre::kCentroid, WindowCentre::kMedian}) {
    opt.centre = centre;
    auto a = anneal(pb, start, opt);
    EXPECT_NO_THROW(check_core_placement(pb, a));
    EXPECT_LT(core_cost(pb, a), core_cost(pb, start));
    EXPECT_EQ(a, anneal(pb, start, opt));
  }
}

TEST(Placers, MedianWindowMovesAStarCentreTowardsItsLeaves) {
  // Node 0 talks to nodes 1, 2, 3 (weight 1 each) on an 8x1 mesh. Start: node 0 at x = 4, its
  // leaves at x = 0, 1, 7 (cost 4 + 3 + 3 = 10); their weighted median is x = 1. A descent whose
  // only moves go within 1 core of the neighbours' median must lower the cost.
  LogicalGraph g;
  for (int i = 0; i < 4; ++i) g.add_node({std::to_string(i)});
  for (int i = 1; i < 4; ++i) g.add_edge(0, i, 1.0);
  CoreProblem pb = make_core_problem(g, 8, 1);
  AnnealOptions opt;
  opt.max_moves = 2000;
  opt.window = 1;
  opt.centre = WindowCentre::kMedian;
  opt.t_start = 1e-9;
  auto a = anneal(pb, {4, 0, 1, 7}, opt);
  EXPECT_NO_THROW(check_core_placement(pb, a));
  EXPECT_LE(core_cost(pb, a), 5.0);
}

TEST(Placers, PolishMovesAStarCentreNextToItsLeavesMedian) {
  // Node 0 talks to nodes 1, 2, 3 at x = 0, 1, 7 of an 8x1 mesh from x = 4 (cost 10). Their median
  // is x = 1; within radius 1 of it the best step takes node 0 to the free core x = 2 (cost 8), and
  // later steps only lower the cost further.
  LogicalGraph g;
  for (int i = 0; i < 4; ++i) g.add_node({std::to_string(i)});
  for (int i = 1; i < 4; ++i) g.add_edge(0, i, 1.0);
  CoreProblem pb = make_core_problem(g, 8, 1);
  auto one = polish(pb, {4, 0, 1, 7}, 1, 1);
  EXPECT_NO_THROW(check_core_placement(pb, one));
  EXPECT_EQ(one[0], 2);
  EXPECT_LE(core_cost(pb, one), 8.0);
}

TEST(Placers, PolishNeverRaisesTheCostAndEndsAtAFixedPoint) {
  LogicalGraph g = gen_family("dag", 48, 2);
  SystemSpec sys = make_system(1, 8, 8);
  for (int c = 0; c < 64; c += 11) sys.occupied[0][c] = true;
  CoreProblem pb = make_core_problem(g, sys, std::vector<int>(g.num_nodes(), 0), 0);
  for (std::vector<int> start : {place_random(pb, 4), place_greedy(pb)}) {
    auto a = polish(pb, start, 2, 1000);
    EXPECT_NO_THROW(check_core_placement(pb, a));
    EXPECT_LT(core_cost(pb, a), core_cost(pb, start));
    EXPECT_EQ(polish(pb, a, 2, 1000), a);
  }
}

TEST(Placers, GreedyAndScotchBeatRandom) {
  LogicalGraph g = gen_family("conv", 64, 1);
  CoreProblem pb = make_core_problem(g, 8, 8);
  double rnd = core_cost(pb, place_random(pb, 1));
  EXPECT_LT(core_cost(pb, place_greedy(pb)), rnd);
  EXPECT_LT(core_cost(pb, place_scotch(pb, 1)), rnd);
}

TEST(Placers, ScotchPlacesAPathAlongAMeshRow) {
  CoreProblem pb = path_problem(8, 8, 1);
  EXPECT_DOUBLE_EQ(core_cost(pb, place_scotch(pb, 1)), 7.0);
}

}  // namespace
}  // namespace tessera::mapper
