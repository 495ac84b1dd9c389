#include "mapper/features.h"

#include <gtest/gtest.h>

namespace tessera::mapper {
namespace {

TEST(Features, HandMadeGraphGivesMinMaxNormalisedColumns) {
  // a -> b (2), a -> c (3), b -> c (1); a is multicast.
  LogicalGraph g;
  g.add_node({"a", true});
  g.add_node({"b"});
  g.add_node({"c"});
  g.add_edge(0, 1, 2.0);
  g.add_edge(0, 2, 3.0);
  g.add_edge(1, 2, 1.0);
  auto raw = raw_features(g);
  EXPECT_EQ(raw[0], (FeatureRow{1, 0, 2, 2, 0, 5, 5}));
  EXPECT_EQ(raw[1], (FeatureRow{0, 1, 1, 2, 2, 1, 3}));
  EXPECT_EQ(raw[2], (FeatureRow{0, 2, 0, 2, 4, 0, 4}));
  auto f = node_features(g);
  EXPECT_EQ(f[0], (FeatureRow{1, 0, 1, 0, 0, 1, 1}));
  EXPECT_EQ(f[1], (FeatureRow{0, 0.5, 0.5, 0, 0.5, 0.2, 0}));
  EXPECT_EQ(f[2], (FeatureRow{0, 1, 0, 0, 1, 0, 0.5}));
}

TEST(Features, EveryColumnLiesInTheUnitInterval) {
  LogicalGraph g;
  for (int i = 0; i < 5; ++i) g.add_node({std::to_string(i), i % 2 == 0});
  for (int i = 0; i + 1 < 5; ++i) g.add_edge(i, i + 1, 1.0 + i);
  for (const auto& r : node_features(g))
    for (double v : r) {
      EXPECT_GE(v, 0.0);
      EXPECT_LE(v, 1.0);
    }
}

}  // namespace
}  // namespace tessera::mapper
