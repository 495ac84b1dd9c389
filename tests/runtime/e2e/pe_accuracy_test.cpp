// mlp, one epoch of Adam on the simulated chip with bit-parallel and with term-serial PEs (default
// accumulator width, same seed): test accuracies within 0.5% absolute (issue 5, section 5).
#include <gtest/gtest.h>

#include <filesystem>

#include "runtime/dataset.h"
#include "runtime/run_config.h"
#include "runtime/training_run.h"

namespace tessera::runtime {
namespace {

nlohmann::ordered_json mlp_epoch(const Dataset& train, const Dataset& test, const std::string& pe) {
  TrainingRunOptions o;
  o.model_name = "mlp";
  o.model = graph::zoo_spec("mlp");
  o.config = load_run_config(std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json", {{"core.mxu.pe", pe}});
  o.trainer.batch = 128;
  o.trainer.seed = 0;
  o.epochs = 1;
  TrainingRun run(train, test, o);
  run.run();
  return run.report()["epochs"][0];
}

TEST(PeAccuracy, MlpTermSerialWithinHalfAPercentOfBitParallel) {
  if (!std::filesystem::exists(std::string(kFashionMnistDir) + "/t10k-labels-idx1-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist not installed";
  const Dataset train = load_fashion_mnist(kFashionMnistDir, Split::kTrain);
  const Dataset test = load_fashion_mnist(kFashionMnistDir, Split::kTest);
  const nlohmann::ordered_json bf16 = mlp_epoch(train, test, "bf16");
  const nlohmann::ordered_json term = mlp_epoch(train, test, "term-serial");
  const double a = bf16["test_accuracy"].get<double>(), b = term["test_accuracy"].get<double>();
  RecordProperty("bf16_test_accuracy", std::to_string(a));
  RecordProperty("term_serial_test_accuracy", std::to_string(b));
  EXPECT_GT(a, 0.80);
  EXPECT_LE(std::abs(a - b), 0.005) << "bit-parallel " << a << ", term-serial " << b;
  EXPECT_EQ(term["pe"]["other"]["pushes"], 0);
  EXPECT_EQ(term["pe"]["total"]["pushes"], bf16["pe"]["total"]["pushes"]);
}

}  // namespace
}  // namespace tessera::runtime
