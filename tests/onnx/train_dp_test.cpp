// `train --model x.onnx --chips N` (runtime/data_parallel.h with the imported model): on one
// processor the checked-in Fashion-MNIST MLP trains bit-identically to the single-chip trainer; on
// 2 chips x 2 cores every replica holds the same weights after every step and the losses follow
// the single chip's at the same global batch (only the gradient summation order differs).
#include <cmath>

#include <gtest/gtest.h>

#include "onnx/onnx_training.h"
#include "runtime/chip_test_data.h"
#include "runtime/data_parallel.h"
#include "runtime/train_chip.h"

namespace tessera::onnx_import {
namespace {

namespace chip_test = runtime::chip_test;

const std::string kFashionMlp = std::string(TESSERA_SOURCE_DIR) + "/data/onnx/fashion_mlp.onnx";

runtime::DataParallelOptions options(int chips, int cores) {
  runtime::DataParallelOptions o;
  o.trainer.batch = 8;
  o.trainer.optimizer.kind = graph::OptimizerKind::kAdam;
  o.trainer.optimizer.lr = 1e-3;
  o.system = chip_test::machine(chips, cores, 0);
  o.check_replicas = true;
  return o;
}

// `steps` steps of the global batch `batch` on `chips` x `cores` and on one chip: the losses of
// both (data seeded by step); the replicas must agree after every step.
void compare(int chips, int cores, int batch, int steps, double tolerance) {
  const runtime::TrainModel model = onnx_train_model(kFashionMlp, "y", "labels");
  const runtime::DataParallelOptions o = options(chips, cores);
  runtime::DataParallelTrainer dp(model, chip_test::tpu_v2_like(), o);
  runtime::ChipTrainer chip(model, chip_test::tpu_v2_like(), o.trainer);
  for (int s = 0; s < steps; ++s) {
    const chip_test::SampleBatch d =
        chip_test::synthetic_batch(batch, 300 + static_cast<uint64_t>(s));
    const double ld = dp.step(d.images.data(), d.labels.data(), batch);
    const float lc = chip.step(d.images.data(), d.labels.data(), batch);
    EXPECT_TRUE(dp.diverged_replicas().empty()) << "step " << s;
    if (tolerance == 0) {
      EXPECT_EQ(ld, static_cast<double>(lc)) << "step " << s;
    } else {
      EXPECT_NEAR(ld, lc, tolerance * lc) << "step " << s;
    }
  }
  if (tolerance == 0) {
    EXPECT_EQ(chip_test::differing_words(dp.params(0), chip.params()), 0u);
  }
}

TEST(OnnxTrainDataParallel, OneProcessorIsBitIdenticalToTheSingleChip) {
  compare(1, 1, 8, 3, 0);
}

TEST(OnnxTrainDataParallel, FourProcessorsKeepReplicasIdenticalAndFollowTheSingleChip) {
  // As for the zoo mlp: the per-sample gradient terms are the same, only the fp32 summation order
  // of the batch reduction differs (shard sums, then the all-reduce's).
  compare(2, 2, 8, 3, 1e-4);
}

}  // namespace
}  // namespace tessera::onnx_import
