// What training an imported model changes: only its float initializers (graph parameters). The
// constants the importer makes (AveragePool's inverse counts, Where's masks and fills, the
// LayerNormalization epsilon and missing bias, Clip's bounds) are graph constants: not in the
// parameters, the optimizer state or the checkpoints, and bit-identical after training steps on
// the host and in the simulated chip's HBM.
#include <cstdlib>
#include <cstring>
#include <set>

#include <gtest/gtest.h>

#include "common/splitmix64.h"
#include "core/spec.h"
#include "graph/autodiff.h"
#include "graph/host_trainer.h"
#include "model_builder.h"
#include "onnx/onnx_training.h"
#include "runtime/chip_test_data.h"
#include "runtime/data_parallel.h"
#include "runtime/train_chip.h"
#include "support/bit_equal.h"
#include "support/temp_dir.h"

namespace tessera::onnx_import {
namespace {

std::vector<float> uniform(int64_t n, double lo, double hi, SplitMix64& rng) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>(lo + (hi - lo) * rng.unit());
  return v;
}

// x [N, 1, 6, 6] -> Conv 3x3 (2 filters, pads 1) -> AveragePool 3x3 (stride 1, pads 1, pads not
// counted) -> Flatten -> Gemm 72 -> 8 [-> Clip(-2, 2)] -> LayerNormalization (gain, no bias) times
// its InvStdDev -> Where(a constant mask, ., a constant fill) -> Gemm 8 -> 4 -> y, opset 17.
std::string model_bytes(bool clip) {
  SplitMix64 rng(17);
  testing::OnnxBuilder b(17);
  b.input("x", {-1, 1, 6, 6});
  b.init("w", {2, 1, 3, 3}, uniform(18, -0.3, 0.3, rng)).init("b", {2}, uniform(2, -0.1, 0.1, rng));
  b.init("w2", {72, 8}, uniform(576, -0.2, 0.2, rng)).init("b2", {8}, uniform(8, -0.1, 0.1, rng));
  b.init("gain", {8}, uniform(8, 0.5, 1.5, rng));
  b.init_ints("cond", {1, 0, 1, 1, 0, 1, 1, 1});
  b.init("fill", {8}, uniform(8, -1, 1, rng));
  b.init("w3", {8, 4}, uniform(32, -0.4, 0.4, rng)).init("b3", {4}, uniform(4, -0.1, 0.1, rng));
  testing::OnnxBuilder::attr(b.node("Conv", {"x", "w", "b"}, {"c"}), "pads",
                             std::vector<int64_t>{1, 1, 1, 1});
  auto& pool = b.node("AveragePool", {"c"}, {"a"});
  testing::OnnxBuilder::attr(pool, "kernel_shape", std::vector<int64_t>{3, 3});
  testing::OnnxBuilder::attr(pool, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Flatten", {"a"}, {"f"});
  b.node("Gemm", {"f", "w2", "b2"}, {"h"});
  std::string h = "h";
  if (clip) {
    b.init("lo", {}, {-2.0f}).init("hi", {}, {2.0f});
    b.node("Clip", {"h", "lo", "hi"}, {"hc"});
    h = "hc";
  }
  b.node("LayerNormalization", {h, "gain"}, {"l", "mean", "inv_std"}, "ln");
  b.node("Mul", {"l", "inv_std"}, {"s"});
  b.node("Where", {"cond", "s", "fill"}, {"m"});
  b.node("Gemm", {"m", "w3", "b3"}, {"y"});
  b.output("y");
  return b.bytes();
}

std::string write_model(const testing::TempDir& dir, bool clip) {
  const std::string path = dir.file(clip ? "clip.onnx" : "constants.onnx");
  testing::write_bytes(path, model_bytes(clip));
  return path;
}

std::set<std::string> names(const graph::Graph& g, const std::vector<int>& ids) {
  std::set<std::string> out;
  for (int id : ids) out.insert(g.value(id).name);
  return out;
}

void expect_bit_identical(const std::vector<std::vector<float>>& a,
                          const std::vector<std::vector<float>>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i)
    testing::expect_bit_equal(a[i], b[i], what + " " + std::to_string(i));
}

TEST(OnnxTrainConstants, OnlyTheInitializersAreParameters) {
  const testing::TempDir dir;
  for (bool clip : {false, true}) {
    const runtime::TrainModel t = onnx_train_model(write_model(dir, clip), "y", "labels");
    const graph::Model m = t.build(4);
    EXPECT_EQ(names(m.graph, m.params),
              (std::set<std::string>{"w", "b", "w2", "b2", "gain", "w3", "b3"}));
    EXPECT_EQ(t.initial.size(), m.params.size());
    std::set<std::string> constants = {"a.inverse_count", "l.bias", "l.eps", "m.then_mask",
                                       "m.else"};
    if (clip) constants.insert({"hc.min", "hc.max"});
    EXPECT_EQ(names(m.graph, m.graph.constants()), constants);
    const graph::TrainingGraph tg = graph::build_training_graph(m.graph, m.loss);
    EXPECT_EQ(tg.grads.size(), m.params.size());  // no gradient of a constant
  }
}

std::vector<std::vector<float>> constants_of(const graph::Graph& g) {
  std::vector<std::vector<float>> out;
  for (int id : g.constants()) out.push_back(*g.value(id).data);
  return out;
}

void check_chip(graph::OptimizerKind kind, double lr) {
  const testing::TempDir dir;
  const runtime::TrainModel model = onnx_train_model(write_model(dir, false), "y", "labels");
  graph::OptimizerConfig opt;
  opt.kind = kind;
  opt.lr = lr;
  runtime::ChipTrainerOptions o;
  o.batch = 8;
  o.optimizer = opt;
  const core::CoreSpec spec = runtime::chip_test::tpu_v2_like();
  runtime::ChipTrainer chip(model, spec, o);
  graph::HostTrainer host(model.build, model.initial, 8, graph::Numerics::kChip, opt);
  SplitMix64 rng(5);
  for (int s = 0; s < 3; ++s) {
    const std::vector<float> x = uniform(8 * 36, 0, 1, rng);
    std::vector<int32_t> labels(8);
    for (int32_t& l : labels) l = static_cast<int32_t>(rng.next() % 4);
    const float lc = chip.step(x.data(), labels.data(), 8);
    const float lh = host.step(x.data(), labels.data(), 8);
    ASSERT_EQ(std::memcmp(&lc, &lh, 4), 0) << "step " << s << ": chip " << lc << " host " << lh;
  }
  expect_bit_identical(chip.params(), host.params(), "parameters");
  expect_bit_identical(chip.optimizer_state(), host.optimizer().state(), "optimizer state");
  EXPECT_NE(chip.params()[4], model.initial[4]) << "gain trained";
  // The constants, as the chip's HBM holds them after the steps, are the file's.
  const std::vector<std::vector<float>> expected = constants_of(model.build(8).graph);
  const compiler::CompiledProgram& p = chip.program(8, true);
  ASSERT_EQ(p.constants.size(), expected.size());
  std::vector<std::vector<float>> in_hbm;
  for (const compiler::HbmTensor& c : p.constants) {
    std::vector<float> v(static_cast<size_t>(c.words));
    chip.core().state().hbm.read_block(c.hbm, reinterpret_cast<uint32_t*>(v.data()), c.words);
    in_hbm.push_back(std::move(v));
  }
  expect_bit_identical(in_hbm, expected, "constants in HBM");
}

TEST(OnnxTrainConstants, ChipStepsKeepTheConstantsAndMatchTheHostBitForBit) {
  check_chip(graph::OptimizerKind::kSgd, 0.1);
  check_chip(graph::OptimizerKind::kAdam, 1e-2);
}

TEST(OnnxTrainConstants, HostStepsWithClipTrainOnlyTheParameters) {
  const testing::TempDir dir;
  const runtime::TrainModel model = onnx_train_model(write_model(dir, true), "y", "labels");
  graph::OptimizerConfig opt;
  opt.kind = graph::OptimizerKind::kAdam;
  opt.lr = 1e-2;
  graph::HostTrainer host(model.build, model.initial, 8, graph::Numerics::kF32, opt);
  SplitMix64 rng(9);
  for (int s = 0; s < 3; ++s) {
    const std::vector<float> x = uniform(8 * 36, 0, 1, rng);
    std::vector<int32_t> labels(8);
    for (int32_t& l : labels) l = static_cast<int32_t>(rng.next() % 4);
    host.step(x.data(), labels.data(), 8);
  }
  ASSERT_EQ(host.params().size(), model.initial.size());
  for (size_t i = 0; i < host.params().size(); ++i)
    EXPECT_NE(host.params()[i], model.initial[i]) << "parameter " << i << " trained";
  expect_bit_identical(constants_of(host.model().graph), constants_of(model.build(8).graph),
                       "constants");
}

TEST(OnnxTrainConstants, DataParallelReplicasFollowTheSingleChip) {
  // The data-parallel image carries the step program's data segments, the constants among them.
  const testing::TempDir dir;
  const runtime::TrainModel model = onnx_train_model(write_model(dir, false), "y", "labels");
  runtime::DataParallelOptions o;
  o.trainer.batch = 8;
  o.trainer.optimizer.kind = graph::OptimizerKind::kAdam;
  o.trainer.optimizer.lr = 1e-2;
  o.system = runtime::chip_test::machine(2, 2, 0);
  o.check_replicas = true;
  runtime::DataParallelTrainer dp(model, runtime::chip_test::tpu_v2_like(), o);
  runtime::ChipTrainer chip(model, runtime::chip_test::tpu_v2_like(), o.trainer);
  SplitMix64 rng(11);
  for (int s = 0; s < 3; ++s) {
    const std::vector<float> x = uniform(8 * 36, 0, 1, rng);
    std::vector<int32_t> labels(8);
    for (int32_t& l : labels) l = static_cast<int32_t>(rng.next() % 4);
    const double ld = dp.step(x.data(), labels.data(), 8);
    const float lc = chip.step(x.data(), labels.data(), 8);
    EXPECT_TRUE(dp.diverged_replicas().empty()) << "step " << s;
    EXPECT_NEAR(ld, lc, 1e-4 * lc) << "step " << s;
  }
}

}  // namespace
}  // namespace tessera::onnx_import
