#include <gtest/gtest.h>

#include "mapper/generators.h"
#include "mapper/graph_io.h"
#include "mapper/mapper.h"
#include "mapper/noc_sim.h"

namespace tessera::mapper {
namespace {

const std::string kData = std::string(TESSERA_SOURCE_DIR) + "/data/mapper/";

TEST(DataFiles, ShippedGraphsAreWhatTheGeneratorsMake) {
  // data/mapper/*.json were written by `tessera map gen`; they must stay in sync with the code.
  EXPECT_EQ(graph_to_json(read_graph(kData + "cnn_graph.json")),
            graph_to_json(gen_from_model("cnn", 7)));
  EXPECT_EQ(graph_to_json(read_graph(kData + "dag48.json")),
            graph_to_json(gen_family("dag", 48, 3)));
}

TEST(DataFiles, CnnOnTheExampleSystemMapsWithoutViolationsAndTheNocFinishes) {
  LogicalGraph g = read_graph(kData + "cnn_graph.json");
  SystemSpec sys = read_system(kData + "system_2x8x8.json");
  MapOptions opt;
  opt.method = "greedy";
  opt.routing = TurnModel::kOddEven;
  MapResult r = map_graph(g, sys, opt);
  EXPECT_EQ(r.metrics.capacity_violations, 0);
  EXPECT_TRUE(r.metrics.deadlock_free);
  for (int v = 0; v < g.num_nodes(); ++v) EXPECT_FALSE(sys.is_occupied(r.core[v]));
  EXPECT_GT(simulate_noc(g, sys, r.core, r.routing).makespan, 0.0);
}

}  // namespace
}  // namespace tessera::mapper
