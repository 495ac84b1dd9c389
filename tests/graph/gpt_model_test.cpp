// The gpt model builder: the graph's values and shapes, its parameters and their initialisation,
// and the errors for bad sizes.
#include "graph/gpt_model.h"

#include <cmath>

#include <gtest/gtest.h>

#include "graph/autodiff.h"
#include "support/error_of.h"

namespace tessera::graph {
namespace {

using testing::error_of;

TEST(GptModel, DefaultRecipeShapesAndParameters) {
  const Model m = build_gpt(GptSpec{}, 32);
  const Graph& g = m.graph;
  EXPECT_EQ(g.value(m.input).shape, (Shape{32, 64}));
  EXPECT_EQ(g.value(m.input).dtype, DType::kI32);
  EXPECT_EQ(g.value(m.labels).shape, (Shape{2048}));
  EXPECT_EQ(g.value(m.logits).shape, (Shape{2048, 256}));
  EXPECT_EQ(g.value(m.loss).shape, Shape{});
  EXPECT_EQ(g.value(g.find_value("block1.attn.probs")).shape, (Shape{32, 4, 64, 64}));
  EXPECT_EQ(g.value(g.find_value("block0.attn.q")).shape, (Shape{32, 4, 64, 32}));
  int64_t count = 0;
  for (int p : m.params) count += num_elements(g.value(p).shape);
  // tok + pos + 2 x (2 LayerNorms + qkv + proj + fc + proj) + ln_f + head
  const int64_t d = 128;
  const int64_t block =
      2 * 2 * d + (d * 3 * d + 3 * d) + (d * d + d) + (d * 4 * d + 4 * d) + (4 * d * d + d);
  EXPECT_EQ(count, 256 * d + 64 * d + 2 * block + 2 * d + (d * 256 + 256));
  EXPECT_EQ(m.params.size(), 2u + 2 * 12 + 2 + 2);
  EXPECT_EQ(g.value(m.params.front()).name, "tok");
  EXPECT_EQ(g.value(m.params.back()).name, "head.b");
  build_training_graph(m.graph, m.loss);  // every parameter affects the loss
}

TEST(GptModel, InitialisationFollowsTheRecipe) {
  const Model m = build_gpt({.d_model = 64, .heads = 4, .layers = 1, .context = 16}, 2);
  const auto params = init_gpt_params(m, 0);
  ASSERT_EQ(params.size(), m.params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string& name = m.graph.value(m.params[i]).name;
    double sum = 0, sq = 0;
    for (float x : params[i]) {
      sum += x;
      sq += static_cast<double>(x) * x;
    }
    const double n = static_cast<double>(params[i].size());
    if (name.ends_with(".gain")) {
      EXPECT_EQ(sum, n) << name;
    } else if (name.ends_with(".b") || name.ends_with(".bias")) {
      EXPECT_EQ(sq, 0.0) << name;
    } else {
      EXPECT_NEAR(std::sqrt(sq / n), 0.02, 0.002) << name;
      EXPECT_NEAR(sum / n, 0.0, 0.004) << name;
    }
  }
  EXPECT_EQ(init_gpt_params(m, 0), params);
  EXPECT_NE(init_gpt_params(m, 1), params);
}

TEST(GptModel_bad, SizesAreCheckedWithClearErrors) {
  EXPECT_EQ(error_of([] { build_gpt({.d_model = 128, .heads = 3}, 1); }),
            "model 'gpt': heads (3) must divide d_model (128)");
  EXPECT_EQ(error_of([] { build_gpt({.context = 0}, 1); }),
            "model 'gpt': context must be >= 1, got 0");
  EXPECT_EQ(error_of([] { build_gpt({}, 0); }), "model 'gpt': batch must be >= 1, got 0");
}

}  // namespace
}  // namespace tessera::graph
