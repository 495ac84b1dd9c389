// The DLRM workload at its defaults on 8 chips of 2 cores with 24 MiB of HBM per core (the
// small-HBM variant of docs/sparse-core.md "DLRM"): the tables (128 MiB) exceed one chip's HBM,
// training lowers the loss, and the test AUC is within 0.005 of the host fp32 reference's.
#include <gtest/gtest.h>

#include "common/thread_pool.h"
#include "core/spec.h"
#include "runtime/dlrm_train.h"
#include "system/system_spec.h"

namespace tessera::runtime {
namespace {

TEST(DlrmAccuracy, EightChipsReachTheHostReferenceAucWithTablesLargerThanAChipsHbm) {
  const DlrmRecipe r;
  core::CoreSpec core;
  core.hbm_bytes = 24 << 20;
  system::SystemSpec sys;
  sys.chips = sys.chips_per_board = 8;
  sys.cores_per_chip = 2;
  sys.topology = system::Topology::kRing;
  EXPECT_GT(int64_t{4} * r.model.tables * r.model.rows * r.model.dim,
            core.hbm_bytes * sys.cores_per_chip);
  ThreadPool pool(2);
  DlrmShardedTrainer chip(r, core, sys, system::ShardPlacement::kMod, &pool);
  const std::vector<double> losses = train_dlrm(r, chip, nullptr);
  EXPECT_LT(losses.back(), losses.front());
  const DlrmEval on_chip = evaluate_dlrm(r, chip);
  DlrmHostTrainer host(r);
  train_dlrm(r, host, nullptr);
  const DlrmEval reference = evaluate_dlrm(r, host);
  EXPECT_NEAR(on_chip.auc, reference.auc, 0.005);
  EXPECT_GT(on_chip.auc, 0.7);
}

}  // namespace
}  // namespace tessera::runtime
