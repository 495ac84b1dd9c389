// Routing tables: hop counts and paths on line, ring and 2-D torus; dimension order; failed links.
#include "fabric/routing.h"

#include <gtest/gtest.h>

#include "support/error_of.h"

namespace tessera::fabric {
namespace {

FabricSpec make(Topology t, int chips, int dx = 1, int dy = 1) {
  FabricSpec s;
  s.chips = chips;
  s.topology = t;
  s.dims_x = dx;
  s.dims_y = dy;
  return s;
}

TEST(Routing, LineGoesStraightWithForwardAndBackwardLinks) {
  const Routing r(make(Topology::kLine, 5));
  EXPECT_EQ(r.channels().size(), 8u);
  EXPECT_EQ(r.path(0, 4), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(r.path(4, 1), (std::vector<int>{4, 3, 2, 1}));
  for (int a = 0; a < 5; ++a)
    for (int b = 0; b < 5; ++b) EXPECT_EQ(r.hops(a, b), std::abs(a - b));
}

TEST(Routing, RingTakesTheShorterWayTiesForward) {
  const Routing r(make(Topology::kRing, 8));
  EXPECT_EQ(r.channels().size(), 16u);
  EXPECT_EQ(r.path(0, 4), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(r.path(0, 5), (std::vector<int>{0, 7, 6, 5}));
  EXPECT_EQ(r.path(6, 1), (std::vector<int>{6, 7, 0, 1}));
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b) EXPECT_EQ(r.hops(a, b), std::min((b - a + 8) % 8, (a - b + 8) % 8));
}

TEST(Routing, TorusUsesDimensionOrderXThenY) {
  const Routing r(make(Topology::kTorus2d, 16, 4, 4));
  EXPECT_EQ(r.channels().size(), 64u);
  // (0,0) -> (2,1): x first (+1, +1), then y
  EXPECT_EQ(r.path(0, 6), (std::vector<int>{0, 1, 2, 6}));
  // (0,0) -> (3,3): one wrap hop in x, one in y
  EXPECT_EQ(r.path(0, 15), (std::vector<int>{0, 3, 15}));
  int max_hops = 0;
  for (int a = 0; a < 16; ++a)
    for (int b = 0; b < 16; ++b) {
      const int dx = std::abs(a % 4 - b % 4), dy = std::abs(a / 4 - b / 4);
      EXPECT_EQ(r.hops(a, b), std::min(dx, 4 - dx) + std::min(dy, 4 - dy));
      const std::vector<int> p = r.path(a, b);
      bool y_moved = false;  // once y moves, x never moves again
      for (size_t i = 1; i < p.size(); ++i) {
        const bool x_move = p[i] / 4 == p[i - 1] / 4;
        EXPECT_FALSE(y_moved && x_move) << a << "->" << b;
        y_moved = y_moved || !x_move;
      }
      max_hops = std::max(max_hops, r.hops(a, b));
    }
  EXPECT_EQ(max_hops, 4);
}

TEST(Routing, NonSquareTorusAndDimensionOfTwo) {
  const Routing r(make(Topology::kTorus2d, 8, 4, 2));
  EXPECT_EQ(r.channels().size(), 8u * 3u);  // x: two neighbours, y: one (dimension of size 2)
  EXPECT_EQ(r.hops(0, 7), 2);
}

TEST(Routing, HalfDuplexSharesOneWirePerLink) {
  FabricSpec s = make(Topology::kRing, 4);
  s.duplex = Duplex::kHalf;
  const Routing r(s);
  EXPECT_EQ(r.channels().size(), 8u);
  EXPECT_EQ(r.wires(), 4);
  EXPECT_EQ(r.channels()[r.channel_between(0, 1)].wire, r.channels()[r.channel_between(1, 0)].wire);
  EXPECT_NE(r.channels()[r.channel_between(0, 1)].wire, r.channels()[r.channel_between(1, 2)].wire);
}

TEST(Routing, FailedLinkIsRoutedAround) {
  FabricSpec s = make(Topology::kRing, 6);
  s.failed_links = {{0, 1}};
  const Routing r(s);
  EXPECT_EQ(r.path(0, 1), (std::vector<int>{0, 5, 4, 3, 2, 1}));
  EXPECT_EQ(r.channel_between(0, 1), -1);
}

TEST(Routing, UnreachableChipIsAConfigurationError_bad) {
  FabricSpec s = make(Topology::kLine, 4);
  s.failed_links = {{1, 2}};
  EXPECT_EQ(testing::error_of([&] { Routing r(s); }),
            "system: key 'system.failed_links': chip 2 cannot reach chip 0: no path avoids the "
            "failed links");
}

}  // namespace
}  // namespace tessera::fabric
