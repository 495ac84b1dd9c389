// The gpt model trained by the host reference executor (fp32) on the fortunes corpus: a few Adam
// steps on random windows lower the loss on the validation stream's first windows.
#include <filesystem>

#include <gtest/gtest.h>

#include "graph/autodiff.h"
#include "graph/executor.h"
#include "graph/gpt_model.h"
#include "graph/optimizer.h"
#include "runtime/fortunes.h"
#include "runtime/text_windows.h"
#include "support/error_of.h"

namespace tessera::runtime {
namespace {

TEST(TextWindows, TargetsAreTheNextByte) {
  const std::string stream = "abcdefgh\xff";
  std::vector<int32_t> ids(6), targets(6);
  fill_windows(stream, {0, 5}, 3, ids.data(), targets.data());
  EXPECT_EQ(ids, (std::vector<int32_t>{'a', 'b', 'c', 'f', 'g', 'h'}));
  EXPECT_EQ(targets, (std::vector<int32_t>{'b', 'c', 'd', 'g', 'h', 255}));
  SplitMix64 rng(3);
  for (int64_t s : draw_window_starts(9, 3, 100, rng)) EXPECT_TRUE(s >= 0 && s <= 5) << s;
  EXPECT_EQ(consecutive_window_starts(9, 4, 2), (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(testing::error_of([] { consecutive_window_starts(8, 4, 2); }),
            "text windows: a stream of 8 bytes does not hold the windows of context 4 (9 bytes "
            "needed)");
}

TEST(GptHostTraining, AdamStepsOnTheCorpusLowerTheValidationLoss) {
  if (!std::filesystem::exists(kFortunesDir)) GTEST_SKIP() << "fortunes is not installed";
  const TextCorpus corpus = load_fortunes();
  const graph::GptSpec spec{.d_model = 32, .heads = 2, .layers = 1, .context = 16};
  constexpr int kBatch = 8, kSteps = 40;
  const graph::Model m = graph::build_gpt(spec, kBatch);
  const graph::TrainingGraph t = graph::build_training_graph(m.graph, m.loss);
  graph::Executor<float> train(t.graph, graph::Numerics::kF32);
  graph::Executor<float> eval(m.graph, graph::Numerics::kF32);
  std::vector<std::vector<float>> params = graph::init_gpt_params(m, 0);
  std::vector<int64_t> sizes;
  for (const auto& p : params) sizes.push_back(static_cast<int64_t>(p.size()));
  graph::Optimizer adam({.kind = graph::OptimizerKind::kAdam, .lr = 1e-2}, sizes);
  std::vector<int32_t> ids(kBatch * spec.context), targets(ids.size());
  auto validation_loss = [&] {
    for (size_t i = 0; i < params.size(); ++i) eval.set(m.params[i], params[i]);
    fill_windows(corpus.validation,
                 consecutive_window_starts(corpus.validation.size(), spec.context, kBatch),
                 spec.context, ids.data(), targets.data());
    eval.set_labels(m.input, ids);
    eval.set_labels(m.labels, targets);
    eval.run();
    return eval.get(m.loss)[0];
  };
  const float before = validation_loss();
  EXPECT_NEAR(before, std::log(256.0), 0.05);  // small weights: nearly uniform over the bytes
  SplitMix64 rng(0);
  for (int step = 0; step < kSteps; ++step) {
    fill_windows(corpus.train, draw_window_starts(corpus.train.size(), spec.context, kBatch, rng),
                 spec.context, ids.data(), targets.data());
    for (size_t i = 0; i < params.size(); ++i) train.set(t.params[i], params[i]);
    train.set_labels(m.input, ids);
    train.set_labels(m.labels, targets);
    train.run();
    std::vector<float*> p;
    std::vector<const float*> g;
    for (size_t i = 0; i < params.size(); ++i) {
      p.push_back(params[i].data());
      g.push_back(train.get(t.grads[i]).data());
    }
    adam.step(p, g);
  }
  const float after = validation_loss();
  EXPECT_LT(after, before - 1.5f) << "before " << before << " after " << after;
}

}  // namespace
}  // namespace tessera::runtime
