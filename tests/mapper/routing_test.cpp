#include "mapper/routing.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "mapper/cdg.h"

namespace tessera::mapper {
namespace {

// The prohibited turns of a model at a router in column x, as "in->out" strings.
std::set<std::string> prohibited(TurnModel m, int x) {
  std::set<std::string> out;
  for (int a = 0; a < kNumDirs; ++a)
    for (int b = 0; b < kNumDirs; ++b) {
      Dir in = static_cast<Dir>(a), o = static_cast<Dir>(b);
      bool uturn = (a ^ b) == 1;  // E/W and N/S pairs differ in the lowest bit
      if (in == o || uturn) continue;
      if (!turn_allowed(m, x, 0, in, o)) out.insert(std::string(dir_name(in)) + "->" + dir_name(o));
    }
  return out;
}

using S = std::set<std::string>;

TEST(TurnLegality, XyProhibitsEveryTurnFromYToX) {
  EXPECT_EQ(prohibited(TurnModel::kXY, 0), (S{"N->E", "N->W", "S->E", "S->W"}));
}
TEST(TurnLegality, WestFirstProhibitsTurnsIntoWest) {
  EXPECT_EQ(prohibited(TurnModel::kWestFirst, 3), (S{"N->W", "S->W"}));
}
TEST(TurnLegality, NorthLastProhibitsTurnsOutOfNorth) {
  EXPECT_EQ(prohibited(TurnModel::kNorthLast, 2), (S{"N->E", "N->W"}));
}
TEST(TurnLegality, NegativeFirstProhibitsPositiveToNegative) {
  EXPECT_EQ(prohibited(TurnModel::kNegativeFirst, 1), (S{"N->W", "E->S"}));
}
TEST(TurnLegality, OddEvenDependsOnTheColumn) {
  EXPECT_EQ(prohibited(TurnModel::kOddEven, 0), (S{"E->N", "E->S"}));
  EXPECT_EQ(prohibited(TurnModel::kOddEven, 1), (S{"N->W", "S->W"}));
  EXPECT_EQ(prohibited(TurnModel::kOddEven, 4), (S{"E->N", "E->S"}));
}
TEST(TurnLegality, FreeProhibitsNothingAndUTurnsAreNeverAllowed) {
  EXPECT_TRUE(prohibited(TurnModel::kFree, 0).empty());
  for (TurnModel m : deadlock_free_models()) EXPECT_FALSE(turn_allowed(m, 1, 1, Dir::kE, Dir::kW));
}
TEST(TurnLegality, ProhibitedTurnCountsOnA3x3Mesh) {
  EXPECT_EQ(prohibited_turn_count(TurnModel::kXY, 3, 3), 16);
  EXPECT_EQ(prohibited_turn_count(TurnModel::kWestFirst, 3, 3), 8);
  EXPECT_EQ(prohibited_turn_count(TurnModel::kFree, 3, 3), 0);
}

// Routes every ordered pair of a w x h mesh; checks minimality and legality; returns the channel
// paths.
std::vector<std::vector<int>> all_pairs(TurnModel m, int w, int h) {
  MeshRouter router(m, w, h);
  std::vector<std::vector<int>> paths;
  for (int s = 0; s < w * h; ++s)
    for (int d = 0; d < w * h; ++d) {
      if (s == d) continue;
      auto hops = router.route(s, d, 1.0 + (s * 7 + d) % 3);
      EXPECT_EQ(static_cast<int>(hops.size()), std::abs(s % w - d % w) + std::abs(s / w - d / w));
      int c = s;
      std::vector<int> path;
      for (size_t i = 0; i < hops.size(); ++i) {
        if (i > 0) {
          EXPECT_TRUE(turn_allowed(m, c % w, c / w, hops[i - 1], hops[i])) << turn_model_name(m);
        }
        path.push_back(channel_id(c, hops[i]));
        c = step(c, hops[i], w);
      }
      EXPECT_EQ(c, d);
      paths.push_back(path);
    }
  return paths;
}

TEST(Routing, EveryTurnModelIsMinimalLegalAndDeadlockFreeOnAllPairs) {
  for (TurnModel m : deadlock_free_models())
    for (auto [w, h] : {std::pair{6, 5}, std::pair{4, 7}, std::pair{1, 5}}) {
      auto paths = all_pairs(m, w, h);
      EXPECT_TRUE(find_cycle(w * h * kNumDirs, paths).empty())
          << turn_model_name(m) << " " << w << "x" << h;
    }
}

TEST(Routing, FreeMinimalRoutingOnAllPairsHasACycle) {
  auto paths = all_pairs(TurnModel::kFree, 4, 4);
  EXPECT_FALSE(find_cycle(16 * kNumDirs, paths).empty());
}

TEST(Routing, XyRouteGoesXThenY) {
  MeshRouter r(TurnModel::kXY, 4, 4);
  auto hops = r.route(0, 2 * 4 + 3, 1.0);  // (0,0) -> (3,2)
  std::vector<Dir> want = {Dir::kE, Dir::kE, Dir::kE, Dir::kS, Dir::kS};
  EXPECT_EQ(hops, want);
}

TEST(Cdg, FindsTheClassicFourTurnCycle) {
  // 2x2 mesh, cores 0 (0,0), 1 (1,0), 2 (0,1), 3 (1,1). Four packets each turning clockwise:
  // 0 -E-> 1 -S-> 3, 1 -S-> 3 -W-> 2, 3 -W-> 2 -N-> 0, 2 -N-> 0 -E-> 1.
  SystemSpec sys = make_system(1, 2, 2);
  std::vector<Route> routes = {{0, 0, 0, {Dir::kE, Dir::kS}},
                               {1, 0, 1, {Dir::kS, Dir::kW}},
                               {2, 0, 3, {Dir::kW, Dir::kN}},
                               {3, 0, 2, {Dir::kN, Dir::kE}}};
  DeadlockReport rep = check_deadlock(routes, sys);
  ASSERT_FALSE(rep.deadlock_free);
  ASSERT_EQ(rep.cycle.size(), 4u);
  EXPECT_EQ(describe_cycle(rep.cycle, sys), "p0 (0,0)E -> p0 (1,0)S -> p0 (1,1)W -> p0 (0,1)N");
  // Dropping one route (one turn of the cycle) breaks it.
  routes.pop_back();
  EXPECT_TRUE(check_deadlock(routes, sys).deadlock_free);
}

}  // namespace
}  // namespace tessera::mapper
