// Data-parallel training (runtime/data_parallel.h) with its processors spread over R ranks
// (DataParallelOptions::comm; ranks as threads, mpi_thread_communicator.h): losses, every
// processor's weights, the step totals and the system statistics equal the one-rank run.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/chip_test_data.h"
#include "runtime/data_parallel.h"
#include "system/mpi_thread_communicator.h"

namespace tessera::system {
namespace {

struct Run {
  std::vector<double> losses;
  std::vector<std::vector<std::vector<float>>> params;  // per processor
  std::vector<int> diverged;
  int64_t wall_ps = 0, compute_ps = 0, exchange_ps = 0, packets = 0;
  std::string system;
};

Run train_on(Communicator& comm, graph::OptimizerKind kind) {
  runtime::DataParallelOptions o;
  o.trainer.batch = 7;  // ragged shards over 4 processors
  o.trainer.optimizer.kind = kind;
  o.trainer.optimizer.lr = kind == graph::OptimizerKind::kSgd ? 0.05 : 1e-3;
  o.system.chips = 2;
  o.system.chips_per_board = 2;
  o.system.cores_per_chip = 2;
  o.system.topology = Topology::kLine;
  o.system.loss_rate = 0.05;
  o.check_replicas = true;
  o.comm = &comm;
  runtime::DataParallelTrainer t(graph::zoo_spec("mlp"), runtime::chip_test::tpu_v2_like(), o);
  Run r;
  for (int s = 0; s < 2; ++s) {
    std::vector<float> images;
    std::vector<int32_t> labels;
    runtime::chip_test::synthetic_samples(7, 300 + static_cast<uint64_t>(s), images, labels);
    r.losses.push_back(t.step(images.data(), labels.data(), 7));
  }
  for (int p = 0; p < t.processors(); ++p) r.params.push_back(t.params(p));
  r.diverged = t.diverged_replicas();
  r.wall_ps = t.totals().wall_ps;
  r.compute_ps = t.totals().compute_ps;
  r.exchange_ps = t.totals().exchange_ps;
  r.packets = static_cast<int64_t>(t.totals().packets);
  r.system = t.system_json().dump();
  return r;
}

void expect_same_for_ranks(graph::OptimizerKind kind) {
  const std::vector<Run> one = on_thread_ranks<Run>(1, [&](Communicator& c) { return train_on(c, kind); });
  EXPECT_TRUE(one[0].diverged.empty());
  for (int ranks : {2, 3}) {
    const std::vector<Run> got = on_thread_ranks<Run>(ranks, [&](Communicator& c) { return train_on(c, kind); });
    for (int r = 0; r < ranks; ++r) {
      const Run& g = got[static_cast<size_t>(r)];
      EXPECT_EQ(g.losses, one[0].losses) << ranks << " ranks, rank " << r;
      EXPECT_EQ(g.params.size(), one[0].params.size());
      for (size_t p = 0; p < g.params.size() && p < one[0].params.size(); ++p)
        EXPECT_EQ(runtime::chip_test::differing_words(g.params[p], one[0].params[p]), 0u) << "processor " << p;
      EXPECT_TRUE(g.diverged.empty());
      EXPECT_EQ(g.wall_ps, one[0].wall_ps);
      EXPECT_EQ(g.compute_ps, one[0].compute_ps);
      EXPECT_EQ(g.exchange_ps, one[0].exchange_ps);
      EXPECT_EQ(g.packets, one[0].packets);
      EXPECT_EQ(g.system, one[0].system);
    }
  }
}

TEST(DataParallelRanks, SgdStepsAreBitIdenticalForOneTwoAndThreeRanks) { expect_same_for_ranks(graph::OptimizerKind::kSgd); }

TEST(DataParallelRanks, AdamOnTheUnitStepsAreBitIdenticalForOneTwoAndThreeRanks) {
  expect_same_for_ranks(graph::OptimizerKind::kAdam);
}

}  // namespace
}  // namespace tessera::system
