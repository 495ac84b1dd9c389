#include "mapper/communities.h"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "common/error.h"
#include "mapper/generators.h"

namespace tessera::mapper {
namespace {

std::vector<int> sizes(const std::vector<int>& labels, int k) {
  std::vector<int> s(k, 0);
  for (int l : labels) {
    EXPECT_GE(l, 0);
    EXPECT_LT(l, k);
    ++s[l];
  }
  return s;
}

TEST(Communities, LouvainRecoversPlantedGroups) {
  LogicalGraph g = gen_planted(64, 4, 0.5, 0.01, 3);
  auto labels = louvain(g, 1.0, 1);
  // Nodes of one planted group share a label in nearly all cases.
  int same = 0, pairs = 0;
  for (int i = 0; i < 64; ++i)
    for (int j = i + 1; j < 64; ++j)
      if (i / 16 == j / 16) {
        ++pairs;
        same += labels[i] == labels[j];
      }
  EXPECT_GT(same, pairs * 9 / 10);
}

TEST(Communities, MergeSplitYieldsExactlyKWithinCapacity) {
  for (uint64_t seed : {1, 2, 3})
    for (auto [k, cap] : {std::pair{1, 200}, std::pair{2, 100}, std::pair{4, 50}, std::pair{8, 25},
                          std::pair{13, 16}}) {
      LogicalGraph g = gen_random_dag(200, 10, 2, seed);
      auto labels = merge_split(g, louvain(g, 1.0, seed), k, cap);
      auto s = sizes(labels, k);
      EXPECT_EQ(std::count(s.begin(), s.end(), 0), 0) << "k=" << k;
      for (int x : s) EXPECT_LE(x, cap) << "k=" << k;
    }
}

TEST(Communities, PriorityRuleGivesASmallProcessorAnotherCommunityThatFits) {
  std::vector<CommunityInfo> info = {{10.0, 5, 0}, {8.0, 3, 0}, {1.0, 2, 0}};
  // Processor 0 has 4 free cores: community 0 (5 nodes, highest priority) does not fit, so it gets
  // the next one that fits (community 1); processor 1 then takes community 0.
  EXPECT_EQ(assign_communities(info, {4, 6, 2}), (std::vector<int>{1, 0, 2}));
  EXPECT_EQ(assign_communities(info, {9, 9, 9}), (std::vector<int>{0, 1, 2}));
}

TEST(Communities, CommunityInfoCountsWeightsAndNeighbours) {
  LogicalGraph g;
  for (int i = 0; i < 4; ++i) g.add_node({std::to_string(i)});
  g.add_edge(0, 1, 1.0);
  g.add_edge(1, 2, 2.5);
  g.add_edge(2, 3, 1.0);
  auto info = community_info(g, {0, 0, 1, 2}, 3);
  EXPECT_DOUBLE_EQ(info[0].connection_weight, 2.5);
  EXPECT_DOUBLE_EQ(info[1].connection_weight, 3.5);
  EXPECT_EQ(info[0].nodes, 2);
  EXPECT_EQ(info[1].neighbour_nodes, 3);
  EXPECT_EQ(info[2].neighbour_nodes, 1);
}

TEST(Communities, ProcessorStagesRespectFreeCores) {
  SystemSpec sys = make_system(4, 4, 4);
  for (int c = 0; c < 6; ++c) sys.occupied[1][c] = true;  // processor 1 has 10 free cores
  LogicalGraph g = gen_planted(56, 4, 0.4, 0.02, 5);
  for (auto proc : {processor_stage_louvain(g, sys, 1), processor_stage_metis(g, sys, 1),
                    processor_stage_sequential(g, sys)}) {
    auto s = sizes(proc, 4);
    for (int p = 0; p < 4; ++p) EXPECT_LE(s[p], sys.free_cores(p));
  }
}

TEST(Communities, TooFewFreeCoresIsAnError_bad) {
  SystemSpec sys = make_system(2, 2, 2);
  LogicalGraph g = gen_random(9, 2.0, 1);
  EXPECT_THROW(processor_stage_louvain(g, sys, 1), Error);
}

}  // namespace
}  // namespace tessera::mapper
