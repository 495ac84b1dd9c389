// The learning recipes on the host reference executor (fp32 with OpenBLAS, and chip
// numerics): the simulated chip must later reach the same figures. Fashion-MNIST from the Debian
// package; pixels / 255, no normalisation, default (Kaiming-uniform) initialisation, seed 0.
#include <cstdio>
#include <filesystem>

#include <gtest/gtest.h>

#include "graph/host_trainer.h"
#include "runtime/dataset.h"

namespace tessera::graph {
namespace {

double train_and_test(const char* model, Numerics mode, int epochs) {
  if (!std::filesystem::exists(runtime::kFashionMnistDir)) return -1;
  const runtime::Dataset train =
      runtime::load_fashion_mnist(runtime::kFashionMnistDir, runtime::Split::kTrain);
  const runtime::Dataset test =
      runtime::load_fashion_mnist(runtime::kFashionMnistDir, runtime::Split::kTest);
  const int batch = 128;
  HostTrainer t(zoo_spec(model), batch, mode, OptimizerConfig{OptimizerKind::kAdam, 1e-3}, 0);
  runtime::Batcher batches(train, batch, 0, true);
  runtime::Batch b;
  for (int e = 0; e < epochs; ++e) {
    batches.start_epoch(e);
    while (batches.next(b)) t.step(b.images.data(), b.labels.data(), b.size);
  }
  runtime::Batcher eval(test, 1000, 0, false);
  EvalResult r;
  while (eval.next(b)) t.evaluate(b.images.data(), b.labels.data(), b.size, r);
  const double acc = static_cast<double>(r.correct) / r.samples;
  std::printf("%s %s %d epoch(s): test accuracy %.2f%%, test loss %.4f\n", model,
              numerics_name(mode), epochs, 100 * acc, r.loss_sum / r.samples);
  return acc;
}

TEST(HostLearning, MlpThreeEpochsAdamF32ReachesTheFrameworkFigure) {
  const double acc = train_and_test("mlp", Numerics::kF32, 3);
  if (acc < 0) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  EXPECT_GE(acc, 0.855);
}

TEST(HostLearning, MlpThreeEpochsAdamChipNumericsReachesTheFrameworkFigure) {
  const double acc = train_and_test("mlp", Numerics::kChip, 3);
  if (acc < 0) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  EXPECT_GE(acc, 0.855);
}

TEST(HostLearning, CnnOneEpochAdamF32ReachesTheFrameworkFigure) {
  const double acc = train_and_test("cnn", Numerics::kF32, 1);
  if (acc < 0) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  EXPECT_GE(acc, 0.865);
}

}  // namespace
}  // namespace tessera::graph
