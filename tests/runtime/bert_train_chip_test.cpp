// The zoo's BERT-style encoder trained on the simulated chip through the run loop on random byte
// windows (a tiny model: 1 layer, d 32, 2 heads, 16 tokens, a 256-token vocabulary, batch 4, Adam
// on the Adam unit): every step's loss, every weight and the evaluation bit-identical to the same
// run on the host reference in chip numerics; a checkpoint's identity names the sizes.
#include <cstring>

#include <gtest/gtest.h>

#include "chip_test_data.h"
#include "runtime/bert_train_model.h"
#include "runtime/dataset.h"
#include "runtime/host_run.h"
#include "runtime/run_config.h"
#include "runtime/training_run.h"
#include "support/error_of.h"

namespace tessera::runtime {
namespace {

constexpr graph::BertSpec kTinyBert{
    .layers = 1, .d_model = 32, .heads = 2, .seq = 16, .vocab = 256};

TrainingRunOptions options(int64_t steps) {
  TrainingRunOptions o;
  o.model_name = "bert";
  o.model = bert_train_model(kTinyBert, 3);
  o.config = load_run_config(std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json");
  o.epochs = 1;
  o.steps_limit = steps;
  o.trainer.batch = 4;
  o.trainer.optimizer.kind = graph::OptimizerKind::kAdam;
  o.trainer.optimizer.lr = 1e-2;
  o.trainer.seed = 7;
  return o;
}

TEST(BertTrainChip, StepsAndEvaluationAreBitIdenticalToTheHostChipNumerics) {
  const Dataset train = synthetic_text("synthetic/train", 12, kTinyBert.seq, 1);
  const Dataset test = synthetic_text("synthetic/test", 4, kTinyBert.seq, 2);
  const TrainingRunOptions o = options(3);
  TrainingRun chip(train, test, o);
  ASSERT_TRUE(chip.run());
  HostRun host(train, test, chip_test::host_chip_numerics(o));
  ASSERT_TRUE(host.run());

  const nlohmann::ordered_json c = chip.report()["epochs"][0], r = host.report()["epochs"][0];
  ASSERT_EQ(c["per_step"]["loss"].size(), 3u);
  for (size_t s = 0; s < 3; ++s) {
    const auto lc = static_cast<float>(c["per_step"]["loss"][s].get<double>());
    const auto lh = static_cast<float>(r["per_step"]["loss"][s].get<double>());
    EXPECT_EQ(std::memcmp(&lc, &lh, 4), 0) << "step " << s << ": chip " << lc << " host " << lh;
  }
  EXPECT_NEAR(c["per_step"]["loss"][0].get<double>(), std::log(256.0), 0.5);
  EXPECT_EQ(c["test_loss"], r["test_loss"]);
  const auto& host_trainer = static_cast<const HostRunTrainer&>(host.RunLoop::trainer());
  EXPECT_EQ(chip_test::differing_words(chip.trainer().params(), host_trainer.parameters()), 0u);
  EXPECT_EQ(chip.report()["model"], "bert");
  const nlohmann::ordered_json id = chip.identity();  // what a checkpoint must match
  EXPECT_EQ(id["bert"]["seq"], 16);
  EXPECT_EQ(id["bert"]["vocab"], 256);
}

// The model takes windows of its sequence length and nothing else; the synthetic text is the
// seed's.
TEST(BertTrainChip, WindowsOfAnotherLengthAndImagesAreRefused_bad) {
  const TrainModel m = bert_train_model(kTinyBert, 3);
  EXPECT_EQ(m.context(), 16);
  EXPECT_EQ(testing::error_of([&] { check_fits_model(synthetic_text("t", 2, 8, 1), m); }),
            "dataset 't': windows of 8 bytes, but model 'bert' has context 16");
  EXPECT_EQ(testing::error_of([&] { check_fits_model(synthetic_images("i", 2, 16, 1, 10, 1), m); }),
            "dataset 'i': an image dataset, but model 'bert' takes text");
  const Dataset a = synthetic_text("a", 3, 16, 9);
  EXPECT_EQ(a.text.size(), 3u * 16 + 1);
  EXPECT_EQ(a.text, synthetic_text("a", 3, 16, 9).text);
  EXPECT_NE(a.text, synthetic_text("a", 3, 16, 10).text);
  EXPECT_EQ(testing::error_of([] { synthetic_text("z", 0, 16, 1); }),
            "dataset 'z': 0 windows of 16 bytes: both must be >= 1");
}

}  // namespace
}  // namespace tessera::runtime
