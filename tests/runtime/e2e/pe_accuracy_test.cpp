// mlp and cnn, one epoch of Adam (lr 1e-3, batch 128, seed 0; configs/tpu-v2-like.json) on the
// simulated chip with bit-parallel and with term-serial PEs (default accumulator width): test
// accuracies within 0.5% absolute. The cnn pair is the long one: both epochs take about 45 minutes
// of host time (docs/performance.md, "The term-serial PE").
#include <filesystem>

#include <gtest/gtest.h>

#include "runtime/dataset.h"
#include "runtime/run_config.h"
#include "runtime/training_run.h"

namespace tessera::runtime {
namespace {

nlohmann::ordered_json epoch_of(const std::string& model, const Dataset& train, const Dataset& test,
                                const std::string& pe) {
  TrainingRunOptions o;
  o.model_name = model;
  o.model = graph::zoo_spec(model);
  o.config = load_run_config(std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json",
                             {{"core.mxu.pe", pe}});
  o.trainer.batch = 128;
  o.trainer.seed = 0;
  o.trainer.optimizer.kind = graph::OptimizerKind::kAdam;
  o.trainer.optimizer.lr = 1e-3;
  o.epochs = 1;
  TrainingRun run(train, test, o);
  run.run();
  return run.report()["epochs"][0];
}

void expect_term_serial_within_half_a_percent(const std::string& model, double at_least) {
  if (!std::filesystem::exists(std::string(kFashionMnistDir) + "/t10k-labels-idx1-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist not installed";
  const Dataset train = load_fashion_mnist(kFashionMnistDir, Split::kTrain);
  const Dataset test = load_fashion_mnist(kFashionMnistDir, Split::kTest);
  const nlohmann::ordered_json bf16 = epoch_of(model, train, test, "bf16");
  const nlohmann::ordered_json term = epoch_of(model, train, test, "term-serial");
  const double a = bf16["test_accuracy"].get<double>(), b = term["test_accuracy"].get<double>();
  testing::Test::RecordProperty("bf16_test_accuracy", std::to_string(a));
  testing::Test::RecordProperty("term_serial_test_accuracy", std::to_string(b));
  EXPECT_GT(a, at_least);
  EXPECT_LE(std::abs(a - b), 0.005) << "bit-parallel " << a << ", term-serial " << b;
  EXPECT_EQ(term["pe"]["other"]["pushes"], 0);
  EXPECT_EQ(term["pe"]["total"]["pushes"], bf16["pe"]["total"]["pushes"]);
}

TEST(PeAccuracy, MlpTermSerialWithinHalfAPercentOfBitParallel) {
  expect_term_serial_within_half_a_percent("mlp", 0.80);
}

TEST(PeAccuracy, CnnTermSerialWithinHalfAPercentOfBitParallel) {
  expect_term_serial_within_half_a_percent("cnn", 0.85);
}

}  // namespace
}  // namespace tessera::runtime
