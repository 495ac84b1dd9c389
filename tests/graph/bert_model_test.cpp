// The bert builder: BERT-base's sizes, shapes, the host forward of a small stack at its
// initialisation, every parameter's gradient, and the errors for bad sizes.
#include "graph/bert_model.h"

#include <cmath>

#include <gtest/gtest.h>

#include "common/splitmix64.h"
#include "graph/autodiff.h"
#include "graph/executor.h"
#include "graph/gpt_model.h"
#include "support/error_of.h"

namespace tessera::graph {
namespace {

using testing::error_of;

TEST(BertModel, BertBaseSizes) {
  const Model m = build_bert(BertSpec{}, 2);
  const Graph& g = m.graph;
  EXPECT_EQ(g.value(m.input).shape, (Shape{2, 128}));
  EXPECT_EQ(g.value(m.labels).shape, (Shape{256}));
  EXPECT_EQ(g.value(m.logits).shape, (Shape{256, 30522}));
  EXPECT_EQ(g.value(g.find_value("layer11.attn.probs")).shape, (Shape{2, 12, 128, 128}));
  EXPECT_EQ(g.value(g.find_value("layer0.attn.q.heads")).shape, (Shape{2, 12, 128, 64}));
  int64_t count = 0;
  for (int p : m.params) count += num_elements(g.value(p).shape);
  const int64_t d = 768, v = 30522;
  const int64_t layer = 4 * (d * d + d) + (d * 4 * d + 4 * d) + (4 * d * d + d) + 2 * 2 * d;
  EXPECT_EQ(layer, 7'087'872);  // BERT-base's encoder layer
  EXPECT_EQ(count, v * d + 128 * d + 12 * layer + (d * v + v));
}

TEST(BertModel, SmallStackRunsOnTheHostAndEveryParameterHasAGradient) {
  const BertSpec spec{.layers = 2, .d_model = 16, .heads = 2, .seq = 8, .vocab = 20};
  const Model m = build_bert(spec, 2);
  const auto params = init_gpt_params(m, 3);
  Executor<float> ex(m.graph, Numerics::kF32);
  SplitMix64 rng(4);
  std::vector<int32_t> ids(16), labels(16);
  for (int32_t& t : ids) t = static_cast<int32_t>(rng.next() % 20);
  for (int32_t& t : labels) t = static_cast<int32_t>(rng.next() % 20);
  ex.set_labels(m.input, ids);
  ex.set_labels(m.labels, labels);
  for (size_t i = 0; i < params.size(); ++i) ex.set(m.params[i], params[i]);
  ex.run();
  // Post-LayerNorm: every row of a layer's output has mean 0 and variance 1 (gain 1, bias 0).
  const std::vector<float>& out = ex.get(m.graph.find_value("layer1.ln2"));
  for (size_t r = 0; r < 16; ++r) {
    double mean = 0, var = 0;
    for (size_t j = 0; j < 16; ++j) mean += out[r * 16 + j] / 16.0;
    for (size_t j = 0; j < 16; ++j) var += (out[r * 16 + j] - mean) * (out[r * 16 + j] - mean) / 16;
    EXPECT_NEAR(mean, 0.0, 1e-5);
    EXPECT_NEAR(var, 1.0, 1e-3);
  }
  // Softmax over the keys: rows sum to 1.
  const std::vector<float>& p = ex.get(m.graph.find_value("layer0.attn.probs"));
  ASSERT_EQ(p.size(), 2u * 2 * 8 * 8);
  for (size_t r = 0; r < p.size() / 8; ++r) {
    double s = 0;
    for (size_t j = 0; j < 8; ++j) s += p[r * 8 + j];
    EXPECT_NEAR(s, 1.0, 1e-5);
  }
  // Head weights N(0, 0.02): logits near 0, so the loss is near ln(vocab).
  EXPECT_NEAR(ex.get(m.loss)[0], std::log(20.0), 0.1);
  const TrainingGraph t = build_training_graph(m.graph, m.loss);
  EXPECT_EQ(t.grads.size(), m.params.size());
}

TEST(BertModel, BadSizesAreErrors) {
  EXPECT_NE(error_of([] {
              build_bert({.d_model = 100, .heads = 12}, 1);
            }).find("heads (12) must divide d_model (100)"),
            std::string::npos);
  EXPECT_NE(error_of([] { build_bert({.layers = 0}, 1); }).find("layers must be >= 1, got 0"),
            std::string::npos);
  EXPECT_NE(error_of([] { build_bert({}, 0); }).find("batch must be >= 1"), std::string::npos);
}

}  // namespace
}  // namespace tessera::graph
