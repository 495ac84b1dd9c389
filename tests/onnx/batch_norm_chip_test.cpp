// Batch normalisation's running averages kept on the simulated chip: data/onnx/bn_convnet.onnx
// (conv - BatchNorm - ReLU - global average pool - Linear, exported by PyTorch 1.13 in training
// mode) trained by the compiled step on the timed core. Its losses, parameters and running
// averages are bit-identical to the host reference in chip numerics, within a bf16 tolerance of
// the host in fp32 and of PyTorch; evaluation on the chip reads the running averages the steps
// left in HBM. Data-parallel, the replicas share their running averages.
#include <algorithm>
#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "graph/host_trainer.h"
#include "onnx/onnx_training.h"
#include "onnx/tensor.h"
#include "runtime/chip_test_data.h"
#include "runtime/data_parallel.h"
#include "runtime/host_run.h"
#include "runtime/train_chip.h"
#include "support/error_of.h"

namespace tessera::onnx_import {
namespace {

std::vector<float> convnet_pb(const std::string& name) {
  const std::string path =
      std::string(TESSERA_SOURCE_DIR) + "/data/onnx/bn_convnet_" + name + ".pb";
  return from_proto(read_tensor_file(path), path).floats();
}

runtime::TrainModel convnet() {
  return onnx_train_model(std::string(TESSERA_SOURCE_DIR) + "/data/onnx/bn_convnet.onnx", "y",
                          "labels");
}

// PyTorch's recipe of bn_convnet_steps.pb: SGD, lr 0.1, no momentum.
graph::OptimizerConfig sgd() {
  graph::OptimizerConfig o;
  o.kind = graph::OptimizerKind::kSgd;
  o.lr = 0.1;
  o.momentum = 0;
  return o;
}

runtime::ChipTrainer chip_trainer(const runtime::TrainModel& t, const graph::OptimizerConfig& o,
                                  int batch) {
  runtime::ChipTrainerOptions c;
  c.batch = batch;
  c.optimizer = o;
  return runtime::ChipTrainer(t, runtime::chip_test::tpu_v2_like(), c);
}

const std::vector<int32_t> kLabels{0, 1, 2, 0};

TEST(BatchNormOnChip, TheProgramKeepsTheRunningAveragesAtTheSameAddressesInTrainingAndEvaluation) {
  const runtime::TrainModel t = convnet();
  compiler::CompileOptions o;
  o.optimizer = sgd();
  o.batch = 4;
  const core::CoreSpec spec = runtime::chip_test::tpu_v2_like();
  const compiler::CompiledProgram step = runtime::compile_train_model(t, spec, o);
  o.batch = 3;
  o.training = false;
  const compiler::CompiledProgram eval = runtime::compile_train_model(t, spec, o);
  ASSERT_EQ(step.model_state.size(), 2u);
  ASSERT_EQ(eval.model_state.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(step.model_state[i].words, 4);
    EXPECT_EQ(step.model_state[i].hbm, eval.model_state[i].hbm);
    EXPECT_EQ(step.model_state[i].name, eval.model_state[i].name);
  }
  EXPECT_EQ(step.model_state[0].name, "bn.running_mean");
  EXPECT_EQ(step.model_state[1].name, "bn.running_var");
}

// Three steps (the third on a partial batch of 3) then an evaluation.
TEST(BatchNormOnChip, StepsAndEvaluationAreBitIdenticalToTheChipNumericsReference) {
  const runtime::TrainModel t = convnet();
  runtime::ChipTrainer chip = chip_trainer(t, sgd(), 4);
  graph::HostTrainer host = runtime::host_trainer(t, 4, graph::Numerics::kChip, sgd(), 0, true);
  host.keep_state(t.initial_state, t.build_eval);
  EXPECT_EQ(chip.model_state(), t.initial_state);
  const std::vector<float> x = convnet_pb("x");
  for (int s = 0; s < 3; ++s) {
    const int n = s < 2 ? 4 : 3;
    const float lc = chip.step(x.data(), kLabels.data(), n);
    const float lh = host.step(x.data(), kLabels.data(), n);
    ASSERT_EQ(std::memcmp(&lc, &lh, 4), 0)
        << "loss of step " << s << ": chip " << lc << " host " << lh;
    EXPECT_EQ(runtime::chip_test::differing_words(chip.model_state(), host.state()), 0u)
        << "running averages after step " << s;
  }
  EXPECT_EQ(runtime::chip_test::differing_words(chip.params(), host.params()), 0u);
  EXPECT_NE(chip.model_state(), t.initial_state);
  const std::vector<std::vector<float>> kept = chip.model_state();
  graph::EvalResult a, b;
  chip.evaluate(x.data(), kLabels.data(), 4, a);
  host.evaluate(x.data(), kLabels.data(), 4, b);
  EXPECT_EQ(a.samples, 4);
  EXPECT_EQ(a.correct, b.correct);
  EXPECT_EQ(a.loss_sum, b.loss_sum);
  EXPECT_EQ(chip.model_state(), kept);
}

// The chip (bf16 MXU inputs, fp32 elsewhere) against the host in fp32 and PyTorch's two steps:
// losses within 1e-2, running averages within 1e-2 of their scale (the largest magnitude, at
// least 1).
TEST(BatchNormOnChip, TwoStepsAgreeWithTheFp32HostAndPyTorchWithinBf16Tolerance) {
  const runtime::TrainModel t = convnet();
  runtime::ChipTrainer chip = chip_trainer(t, sgd(), 4);
  graph::HostTrainer host = runtime::host_trainer(t, 4, graph::Numerics::kF32, sgd(), 0, true);
  host.keep_state(t.initial_state, t.build_eval);
  const std::vector<float> x = convnet_pb("x"), want = convnet_pb("steps"),
                           loss = convnet_pb("loss");
  for (int s = 0; s < 2; ++s) {
    const float lc = chip.step(x.data(), kLabels.data(), 4);
    EXPECT_NEAR(lc, host.step(x.data(), kLabels.data(), 4), 1e-2) << "step " << s;
    EXPECT_NEAR(lc, loss[static_cast<size_t>(s)], 1e-2) << "step " << s;
    const std::vector<std::vector<float>> got = chip.model_state();
    for (size_t k = 0; k < 2; ++k) {
      float scale = 1;
      for (float v : host.state()[k]) scale = std::max(scale, std::fabs(v));
      for (size_t c = 0; c < 4; ++c) {
        const std::string what = "step " + std::to_string(s) +
                                 (k == 0 ? " running mean " : " running var ") + std::to_string(c);
        EXPECT_NEAR(got[k][c], host.state()[k][c], 1e-2 * scale) << what;
        EXPECT_NEAR(got[k][c], want[(2 * s + k) * 4 + c], 1e-2 * scale) << what;
      }
    }
  }
}

TEST(BatchNormOnChip, TheModelStateIsImportedAndChecked) {
  const runtime::TrainModel t = convnet();
  runtime::ChipTrainer chip = chip_trainer(t, sgd(), 4);
  const std::vector<std::vector<float>> s{{1, 2, 3, 4}, {5, 6, 7, 8}};
  chip.set_model_state(s);
  EXPECT_EQ(chip.model_state(), s);
  EXPECT_NE(testing::error_of([&] {
              chip.set_model_state({{1, 2, 3, 4}});
            }).find("model state: 1 tensors given, the compiled step has 2"),
            std::string::npos);
}

// Data-parallel on 2 processors (2 samples each): each replica normalises its own shard, so its
// loss is a single chip's on that shard; the running averages are all-reduced with the gradients,
// so every replica then holds the mean of the two single chips' (the shards weigh the same), and
// evaluation and checkpoints read them.
TEST(BatchNormOnChip, DataParallelReplicasNormaliseTheirShardsAndShareTheirRunningAverages) {
  const runtime::TrainModel t = convnet();
  runtime::DataParallelOptions o;
  o.trainer.batch = 4;
  o.trainer.optimizer = sgd();
  o.system = runtime::chip_test::machine(2, 1, 0);
  o.check_replicas = true;
  runtime::DataParallelTrainer dp(t, runtime::chip_test::tpu_v2_like(), o);
  EXPECT_EQ(dp.model_state(), t.initial_state);
  const std::vector<float> x = convnet_pb("x");
  const int64_t sample = static_cast<int64_t>(x.size()) / 4;
  std::vector<float> shard_loss;
  std::vector<std::vector<std::vector<float>>> shard_state;
  for (int p = 0; p < 2; ++p) {
    runtime::ChipTrainer chip = chip_trainer(t, sgd(), 2);
    shard_loss.push_back(chip.step(x.data() + 2 * p * sample, kLabels.data() + 2 * p, 2));
    shard_state.push_back(chip.model_state());
  }
  const double loss = dp.step(x.data(), kLabels.data(), 4);
  EXPECT_EQ(loss, (2.0 * shard_loss[0] + 2.0 * shard_loss[1]) / 4);
  const std::vector<std::vector<float>> state = dp.model_state();
  ASSERT_EQ(state.size(), 2u);
  for (size_t k = 0; k < 2; ++k)
    for (size_t c = 0; c < 4; ++c) {
      EXPECT_EQ(state[k][c], 0.5f * shard_state[0][k][c] + 0.5f * shard_state[1][k][c])
          << (k == 0 ? "running mean " : "running var ") << c;
      EXPECT_NE(shard_state[0][k][c], shard_state[1][k][c]) << "the shards should differ";
    }
  const auto [params, kept] = dp.replica_state();  // checks that every replica holds the same
  ASSERT_GE(kept.size(), 2u);                      // the optimizer state, then the model state
  EXPECT_EQ(std::vector<std::vector<float>>(kept.end() - 2, kept.end()), state);
  // Evaluation reads processor 0's running averages: as a single chip holding them.
  runtime::ChipTrainer chip = chip_trainer(t, sgd(), 4);
  chip.set_params(params);
  chip.set_model_state(state);
  graph::EvalResult a, b;
  std::vector<runtime::Batch> batches(1);
  batches[0].images = x;
  batches[0].labels = kLabels;
  batches[0].size = 4;
  dp.evaluate(batches, a);
  chip.evaluate(x.data(), kLabels.data(), 4, b);
  EXPECT_EQ(a.samples, 4);
  EXPECT_EQ(a.correct, b.correct);
  EXPECT_EQ(a.loss_sum, b.loss_sum);
}

// The backward pass reads the gamma and beta gradients again (for the input's gradient): a bucket
// holding them must not write their reduced sum back before that, so the overlapped buckets give
// the same values bit for bit as the same buckets after the backward pass.
TEST(BatchNormOnChip, DataParallelOverlappedBucketsWaitForTheLastReaderOfAGradient) {
  const runtime::TrainModel t = convnet();
  const std::vector<float> x = convnet_pb("x");
  std::vector<std::vector<std::vector<float>>> params, state;
  std::vector<std::vector<double>> losses(2);
  for (const bool overlap : {true, false}) {
    runtime::DataParallelOptions o;
    o.trainer.batch = 4;
    o.trainer.optimizer = sgd();
    o.system = runtime::chip_test::machine(2, 1, 0);
    o.bucket_words = 4;  // a bucket per parameter
    o.overlap = overlap;
    runtime::DataParallelTrainer dp(t, runtime::chip_test::tpu_v2_like(), o);
    EXPECT_EQ(dp.first_image().overlapped_supersteps > 0, overlap);
    for (int s = 0; s < 2; ++s)
      losses[overlap ? 0 : 1].push_back(dp.step(x.data(), kLabels.data(), 4));
    params.push_back(dp.params(0));
    state.push_back(dp.model_state());
  }
  EXPECT_EQ(losses[0], losses[1]);
  EXPECT_EQ(runtime::chip_test::differing_words(params[0], params[1]), 0u);
  EXPECT_EQ(state[0], state[1]);
}

}  // namespace
}  // namespace tessera::onnx_import
