// cnn, one epoch of Adam (lr 1e-3, batch 128, seed 0) on the simulated chip with the built-in
// default config: test accuracy >= 86.5% (a common fp32 framework reaches
// about 87.0% with this recipe). The step is one compiled program whose GEMM, im2col and pooling
// kernels run as counted loops (it did not fit the instruction memory as straight-line code).
#include <filesystem>

#include <gtest/gtest.h>

#include "compiler/compiler.h"
#include "runtime/dataset.h"
#include "runtime/run_config.h"
#include "runtime/training_run.h"

namespace tessera::runtime {
namespace {

// Compiling cnn at batch 128 takes about 20 s of host time (the loop rolling), hence this tier.
TEST(CnnAccuracy, Batch128StepFitsTheInstructionMemory) {
  const RunConfig c = load_run_config("");
  compiler::CompileOptions o;
  o.batch = 128;
  const compiler::CompiledProgram p = compiler::compile(graph::zoo_spec("cnn"), c.spec, o);
  RecordProperty("bundles", std::to_string(p.stats.bundles));
  EXPECT_LE(p.stats.bundles, c.spec.imem_bundles);
}

TEST(CnnAccuracy, OneEpochOfAdamReachesEightySixAndAHalfPercent) {
  if (!std::filesystem::exists(std::string(kFashionMnistDir) + "/t10k-labels-idx1-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist not installed";
  const Dataset train = load_fashion_mnist(kFashionMnistDir, Split::kTrain);
  const Dataset test = load_fashion_mnist(kFashionMnistDir, Split::kTest);
  TrainingRunOptions o;
  o.model_name = "cnn";
  o.model = graph::zoo_spec("cnn");
  o.config = load_run_config("");
  o.trainer.batch = 128;
  o.trainer.seed = 0;
  o.trainer.optimizer.kind = graph::OptimizerKind::kAdam;
  o.trainer.optimizer.lr = 1e-3;
  o.epochs = 1;
  TrainingRun run(train, test, o);
  run.run();
  const nlohmann::ordered_json epoch = run.report()["epochs"][0];
  const double accuracy = epoch["test_accuracy"].get<double>();
  RecordProperty("test_accuracy", std::to_string(accuracy));
  RecordProperty("cycles", epoch["cycles"].dump());
  EXPECT_GE(accuracy, 0.865);
}

}  // namespace
}  // namespace tessera::runtime
