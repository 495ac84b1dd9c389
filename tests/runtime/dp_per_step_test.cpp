// The per-step figures of a data-parallel epoch report (runtime/data_parallel_run.h "per_step"):
// one entry per training step, and the epoch's figures are their sums (supersteps exactly, times
// to rounding: the epoch converts its picosecond sums once, the steps each their own), the mean of
// the step losses weighted by the samples is the epoch's loss, and every step's overlap is
// max(0, compute + exchange - seconds).
#include <algorithm>

#include <gtest/gtest.h>

#include "chip_test_data.h"
#include "runtime/data_parallel_run.h"

namespace tessera::runtime {
namespace {

TEST(DataParallelPerStep, TheEpochsFiguresAreTheSumsOfItsSteps) {
  // 37 samples in batches of 8 on 3 processors: 4 steps of 8 and one of 5 per epoch.
  const Dataset train = chip_test::synthetic_dataset("synthetic", 37, 1);
  const Dataset test = chip_test::synthetic_dataset("synthetic-test", 6, 2);
  DataParallelRunOptions o;
  o.model_name = "mlp";
  o.model = graph::zoo_spec("mlp");
  o.config = load_run_config(std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json");
  o.dp.trainer.batch = 8;
  o.dp.trainer.optimizer.lr = 0.05;
  o.dp.system = chip_test::machine(3, 1, 0);
  o.epochs = 2;
  DataParallelRun r(train, test, o);
  ASSERT_TRUE(r.run());
  const auto report = r.report();  // by value: a range over a temporary's member would dangle
  for (const auto& e : report["epochs"]) {
    const auto& s = e["per_step"];
    const size_t steps = e["steps"].get<size_t>();
    ASSERT_EQ(steps, 5u);
    double seconds = 0, compute = 0, exchange = 0, loss = 0;
    int64_t supersteps = 0;
    for (const char* k : {"loss", "seconds", "compute_seconds", "exchange_seconds",
                          "barrier_seconds", "overlap_seconds", "supersteps"})
      ASSERT_EQ(s[k].size(), steps) << k;
    for (size_t i = 0; i < steps; ++i) {
      const double c = s["compute_seconds"][i], x = s["exchange_seconds"][i], w = s["seconds"][i];
      EXPECT_GT(w, 0);
      EXPECT_LE(s["barrier_seconds"][i].get<double>(), x);
      EXPECT_DOUBLE_EQ(s["overlap_seconds"][i].get<double>(), std::max(0.0, c + x - w));
      seconds += w;
      compute += c;
      exchange += x;
      supersteps += s["supersteps"][i].get<int64_t>();
      loss += s["loss"][i].get<double>() * (i + 1 < steps ? 8 : 5);
    }
    EXPECT_EQ(supersteps, e["supersteps"].get<int64_t>());
    EXPECT_NEAR(seconds, e["sim_chip_seconds"].get<double>(), 1e-12);
    EXPECT_NEAR(compute, e["compute_seconds"].get<double>(), 1e-12);
    EXPECT_NEAR(exchange, e["exchange_seconds"].get<double>(), 1e-12);
    EXPECT_NEAR(loss / 37, e["loss"].get<double>(), 1e-12);
  }
}

}  // namespace
}  // namespace tessera::runtime
