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

}  // namespace
}  // namespace tessera::runtime
