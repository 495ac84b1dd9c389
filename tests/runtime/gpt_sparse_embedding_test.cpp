// The gpt decoder's token embedding on the sparse core (ChipTrainerOptions::embedding_on, the
// compiler's EmbeddingOn::kSparseCore; docs/sparse-core.md): the tiny gpt of gpt_test_data.h
// trained a few steps with the embedding on the tensor core and on the sparse core is bit-identical
// (the loss of every step, every weight and all optimizer state, the validation loss), through HBM
// and through vector memory; the sparse core did the gathers and the dense scatter-adds, and the
// cycles differ.
#include <string>

#include <gtest/gtest.h>

#include "chip_test_data.h"
#include "gpt_test_data.h"
#include "runtime/training_run.h"

namespace tessera::runtime {
namespace {

using gpt_test::data;

constexpr int64_t kSteps = 4;

struct Outcome {
  nlohmann::ordered_json epoch;
  std::vector<std::vector<float>> params, state;
  core::SparseCoreStats sparse;
};

Outcome train(compiler::EmbeddingOn on, int64_t vmem_handoff_bytes = -1) {
  TrainingRunOptions o = gpt_test::options(4, kSteps);
  o.trainer.embedding_on = on;
  if (vmem_handoff_bytes >= 0) o.config.spec.sparse.vmem_handoff_bytes = vmem_handoff_bytes;
  TrainingRun run(data().train, data().test, o);
  EXPECT_TRUE(run.run());
  return {run.report()["epochs"][0], run.trainer().params(), run.trainer().optimizer_state(),
          run.trainer().core().machine().sparse().stats()};
}

void expect_same_values(const Outcome& a, const Outcome& b) {
  ASSERT_EQ(a.epoch["per_step"]["loss"].size(), static_cast<size_t>(kSteps));
  EXPECT_EQ(a.epoch["per_step"]["loss"], b.epoch["per_step"]["loss"]);
  EXPECT_EQ(a.epoch["test_loss"], b.epoch["test_loss"]);
  EXPECT_EQ(a.epoch["test_accuracy"], b.epoch["test_accuracy"]);
  EXPECT_EQ(a.epoch["train_accuracy"], b.epoch["train_accuracy"]);
  EXPECT_EQ(chip_test::differing_words(a.params, b.params), 0u);
  EXPECT_EQ(chip_test::differing_words(a.state, b.state), 0u);
}

TEST(GptSparseEmbedding, StepsAreBitIdenticalWithTheEmbeddingOnEitherCore) {
  const Outcome tensor = train(compiler::EmbeddingOn::kTensorCore);
  EXPECT_EQ(tensor.sparse.descriptors, 0);
  for (const int64_t vmem : {int64_t{0}, int64_t{1} << 20}) {
    SCOPED_TRACE("vmem_handoff_bytes " + std::to_string(vmem));
    const Outcome sparse = train(compiler::EmbeddingOn::kSparseCore, vmem);
    expect_same_values(tensor, sparse);
    // Every training step: a gather, a wait and a dense scatter-add; every evaluation batch a
    // gather.
    EXPECT_EQ(sparse.sparse.scatter_adds, kSteps);
    EXPECT_GT(sparse.sparse.gathers, kSteps);
    EXPECT_EQ(sparse.sparse.waits, kSteps);
    EXPECT_EQ(sparse.sparse.vmem_bytes > 0, vmem > 0);
    EXPECT_NE(sparse.epoch["sim_cycles"], tensor.epoch["sim_cycles"]);
  }
}

// The epoch's energy_j takes in the sparse core's energy of the training steps: priced at 1 pJ a
// descriptor and nothing else, it is 3 descriptors a step (gather, wait, scatter-add); the
// tensor-core run has no sparse-core energy.
TEST(GptSparseEmbedding, TheEpochsEnergyIncludesTheSparseCoresSteps) {
  auto epoch = [](compiler::EmbeddingOn on) {
    TrainingRunOptions o = gpt_test::options(4, kSteps);
    o.trainer.embedding_on = on;
    core::SparseCoreSpec& sc = o.config.spec.sparse;
    sc.id_pj = sc.element_op_pj = sc.vmem_byte_pj = 0;
    sc.descriptor_pj = 1;
    o.config.spec.energy.hbm_byte_pj = 0;
    TrainingRun run(data().train, data().test, o);
    EXPECT_TRUE(run.run());
    return run.report()["epochs"][0];
  };
  const nlohmann::ordered_json tensor = epoch(compiler::EmbeddingOn::kTensorCore);
  const nlohmann::ordered_json sparse = epoch(compiler::EmbeddingOn::kSparseCore);
  EXPECT_FALSE(tensor.contains("energy_sparse_core_j"));
  ASSERT_TRUE(sparse.contains("energy_sparse_core_j"));
  EXPECT_DOUBLE_EQ(sparse["energy_sparse_core_j"].get<double>(), 3 * kSteps * 1e-12);
  EXPECT_GT(sparse["energy_j"].get<double>(), sparse["energy_sparse_core_j"].get<double>());
}

}  // namespace
}  // namespace tessera::runtime
