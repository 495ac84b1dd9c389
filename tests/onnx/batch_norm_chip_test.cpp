// Batch normalisation's running averages kept on the simulated chip: data/onnx/bn_convnet.onnx
// (conv - BatchNorm - ReLU - global average pool - Linear, exported by PyTorch 1.13 in training
// mode) trained by the compiled step on the timed core. Its losses, parameters and running
// averages are bit-identical to the host reference in chip numerics, within a bf16 tolerance of
// the host in fp32 and of PyTorch; evaluation on the chip reads the running averages the steps
// left in HBM.
#include <algorithm>
#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "graph/host_trainer.h"
#include "onnx/onnx_training.h"
#include "onnx/tensor.h"
#include "runtime/chip_test_data.h"
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

TEST(BatchNormOnChip, DataParallelTrainingOfAModelWithStateIsRefused) {
  const runtime::TrainModel t = convnet();
  compiler::CompileOptions o;
  o.batch = 2;
  compiler::AllReduceOptions ar;
  ar.processors = 2;
  ar.shard = 2;
  ar.global_batch = 4;
  o.allreduce = ar;
  compiler::CompileOptions step;  // the data-parallel trainer's step, before its all-reduce image
  step.batch = 2;
  step.persistent_grads = true;
  for (const compiler::CompileOptions& c : {o, step}) {
    const std::string why = testing::error_of(
        [&] { runtime::compile_train_model(t, runtime::chip_test::tpu_v2_like(), c); });
    EXPECT_NE(why.find("carries 2 state values from step to step (batch normalisation's running "
                       "averages); data-parallel programs do not keep state yet"),
              std::string::npos)
        << why;
  }
}

}  // namespace
}  // namespace tessera::onnx_import
