#include <gtest/gtest.h>

#include "common/error.h"
#include "mapper/communities.h"
#include "mapper/generators.h"
#include "mapper/graph_io.h"
#include "mapper/mapper.h"
#include "mapper/output.h"

namespace tessera::mapper {
namespace {

TEST(Generators, SameSeedSameGraphAndOtherSeedOtherGraph) {
  for (const std::string& f : family_names()) {
    std::string a = graph_to_json(gen_family(f, 100, 3));
    EXPECT_EQ(a, graph_to_json(gen_family(f, 100, 3))) << f;
    if (f != "tiles") {
      EXPECT_NE(a, graph_to_json(gen_family(f, 100, 4))) << f;
    }
  }
}

TEST(Generators, SuiteSizesFitTheirSystems) {
  for (const std::string& f : family_names()) {
    EXPECT_LE(gen_family(f, 64, 1).num_nodes(), 64) << f;
    EXPECT_GE(gen_family(f, 64, 1).num_nodes(), 40) << f;
    EXPECT_LE(gen_family(f, 960, 1).num_nodes(), 1024) << f;
    EXPECT_GE(gen_family(f, 960, 1).num_nodes(), 700) << f;
  }
}

TEST(Generators, ZooModelsHaveTheExpectedShape) {
  LogicalGraph mlp = gen_from_model("mlp", 16);
  EXPECT_EQ(mlp.num_nodes(), 49 + 16 + 8 + 1);
  EXPECT_EQ(mlp.num_edges(), 49 * 16 + 16 * 8 + 8 * 1);
  LogicalGraph cnn = gen_from_model("cnn", 7);
  EXPECT_EQ(cnn.num_nodes(), 4 + 4 * 4 + 9 * 8 + 1);
  // fc receives the whole 7x7x64 = 3136 activations.
  double into_fc = 0.0;
  for (const Neighbor& nb : cnn.in(cnn.find("fc"))) into_fc += nb.weight;
  EXPECT_DOUBLE_EQ(into_fc, 3136.0);
}

TEST(Metrics, HandComputedCostsAndReward) {
  LogicalGraph g;
  g.add_node({"a"});
  g.add_node({"b"});
  g.add_edge(0, 1, 2.0);
  SystemSpec sys = make_system(1, 3, 2);
  std::vector<int> core = {0, sys.core_id(0, 2, 1)};
  Routing r = route_placement(g, sys, core, TurnModel::kXY);
  Metrics m = evaluate(g, sys, core, r);
  EXPECT_DOUBLE_EQ(m.cost_total, 6.0);
  EXPECT_DOUBLE_EQ(m.dir_cost[0], 4.0);  // east
  EXPECT_DOUBLE_EQ(m.dir_cost[3], 2.0);  // south
  EXPECT_DOUBLE_EQ(m.reward, -6.0);
  EXPECT_DOUBLE_EQ(m.max_link_load, 2.0);
  EXPECT_EQ(m.capacity_violations, 0);
  EXPECT_TRUE(m.deadlock_free);
}

TEST(Metrics, InterProcessorEdgesCountAsCutAndWeightedInterCost) {
  LogicalGraph g;
  g.add_node({"a"});
  g.add_node({"b"});
  g.add_edge(0, 1, 3.0);
  SystemSpec sys = make_system(2, 2, 2);
  std::vector<int> core = {0, 4};
  Metrics m = evaluate(g, sys, core, route_placement(g, sys, core, TurnModel::kXY));
  EXPECT_DOUBLE_EQ(m.cut, 3.0);
  EXPECT_DOUBLE_EQ(m.cost_inter, 3.0);
  EXPECT_DOUBLE_EQ(m.cost_total, 3.0 * sys.link_bandwidth / sys.inter_link_bandwidth);
  EXPECT_EQ(count_capacity_violations(sys, {0, 0}), 1);
}

TEST(Pipeline, EveryMethodAndRoutingHasNoViolationsAndIsDeadlockFree) {
  SystemSpec sys = make_system(2, 6, 6);
  for (int c = 0; c < 36; c += 9) sys.occupied[0][c] = true;
  LogicalGraph g = gen_family("dag", 60, 2);
  Policy pol(8);
  pol.init(1);
  for (const std::string& m : core_methods())
    for (TurnModel t : deadlock_free_models()) {
      MapOptions opt;
      opt.method = m;
      opt.routing = t;
      opt.policy = &pol;
      opt.anneal_moves_per_node = 50;
      MapResult r = map_graph(g, sys, opt);
      EXPECT_EQ(r.metrics.capacity_violations, 0) << m;
      EXPECT_TRUE(r.metrics.deadlock_free) << m << " " << turn_model_name(t);
      EXPECT_EQ(r.metrics.prohibited_turns, 0);
    }
}

TEST(Pipeline, SameInputsAndSeedGiveIdenticalOutput) {
  SystemSpec sys = make_system(2, 6, 6);
  LogicalGraph g = gen_family("planted", 60, 5);
  Policy pol(8);
  pol.init(2);
  MapOptions opt;
  opt.policy = &pol;
  opt.processor_stage = "louvain";
  auto a = result_json(g, sys, opt, map_graph(g, sys, opt), nullptr, false).dump();
  auto b = result_json(g, sys, opt, map_graph(g, sys, opt), nullptr, false).dump();
  EXPECT_EQ(a, b);
}

TEST(Pipeline, EachPlacedNodeCarriesItsLouvainCommunityWhateverTheMethod) {
  SystemSpec sys = make_system(2, 6, 6);
  LogicalGraph g = gen_family("planted", 60, 5);
  const std::vector<int> want = louvain(g, 1.0, 3);
  for (const char* method : {"greedy", "snake"}) {
    MapOptions opt;
    opt.method = method;
    opt.seed = 3;
    const auto j = result_json(g, sys, opt, map_graph(g, sys, opt), nullptr, false);
    ASSERT_EQ(j["placement"].size(), want.size());
    for (size_t v = 0; v < want.size(); ++v)
      EXPECT_EQ(j["placement"][v]["community"], want[v]) << method << " node " << v;
  }
}

TEST(Pipeline, UnknownMethodOrStageIsAnError_bad) {
  SystemSpec sys = make_system(1, 4, 4);
  LogicalGraph g = gen_family("random", 10, 1);
  MapOptions opt;
  opt.method = "magic";
  EXPECT_THROW(map_graph(g, sys, opt), Error);
  opt.method = "greedy";
  opt.processor_stage = "magic";
  EXPECT_THROW(map_graph(g, sys, opt), Error);
  opt.method = "rl";
  opt.processor_stage = "louvain";
  EXPECT_THROW(map_graph(g, sys, opt), Error);  // no policy
}

}  // namespace
}  // namespace tessera::mapper

namespace tessera::mapper {
namespace {

TEST(Output, SvgDrawsEveryCoreAndEveryLoadedLink) {
  SystemSpec sys = make_system(2, 4, 3);
  LogicalGraph g = gen_family("dag", 16, 1);
  MapOptions opt;
  opt.method = "greedy";
  MapResult r = map_graph(g, sys, opt);
  std::string svg = result_svg(g, sys, r);
  auto count = [&](const std::string& s) {
    size_t n = 0;
    for (size_t p = svg.find(s); p != std::string::npos; p = svg.find(s, p + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("<rect"), 24u);
  size_t loaded = 0;
  for (double l : r.routing.link_load) loaded += l > 0.0;
  EXPECT_EQ(count("<line"), loaded);
  auto j = result_json(g, sys, opt, r, nullptr, false);
  EXPECT_EQ(j["placement"].size(), 16u);
  EXPECT_EQ(j["routes"].size() + j["inter_processor"].size(), static_cast<size_t>(g.num_edges()));
}

}  // namespace
}  // namespace tessera::mapper
