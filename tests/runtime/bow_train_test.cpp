// The bag-of-words model and its host training: the model's shapes, the table's per-row
// initialisation, and steps on a small separable corpus (only the batch's rows change, the loss
// falls, the classes are learnt), fp32 and chip numerics alike.
#include "runtime/bow_train.h"

#include <cmath>

#include <gtest/gtest.h>

#include "graph/bow_model.h"

namespace tessera::runtime {
namespace {

TEST(BowModel, ShapesAndParameterOrder) {
  const graph::BowSpec spec{1000, 8, 5, 0.1};
  const graph::Model m = graph::build_bow(spec, 4, 30);
  const graph::Graph& g = m.graph;
  EXPECT_EQ(g.value(m.input).shape, (graph::Shape{30}));
  EXPECT_EQ(g.value(graph::bow_offsets(m)).shape, (graph::Shape{5}));
  EXPECT_EQ(g.value(m.logits).shape, (graph::Shape{4, 5}));
  ASSERT_EQ(m.params.size(), 3u);
  EXPECT_EQ(g.value(m.params[0]).name, "fc.w");
  EXPECT_EQ(g.value(m.params[2]).shape, (graph::Shape{1000, 8}));
}

TEST(BowModel, TableRowsAreSeededPerRowWithTheRecipesDeviation) {
  const graph::BowSpec spec{int64_t{1} << 20, 64, 2, 0.1};
  EXPECT_EQ(graph::bow_table_row(spec, 7, 12345), graph::bow_table_row(spec, 7, 12345));
  EXPECT_NE(graph::bow_table_row(spec, 7, 12345), graph::bow_table_row(spec, 7, 12346));
  EXPECT_NE(graph::bow_table_row(spec, 7, 12345), graph::bow_table_row(spec, 8, 12345));
  double sum = 0, squares = 0;
  const int rows = 2000;
  for (int r = 0; r < rows; ++r)
    for (float x : graph::bow_table_row(spec, 0, r)) sum += x, squares += double{x} * x;
  const double n = rows * 64.0, mean = sum / n;
  EXPECT_NEAR(mean, 0.0, 0.002);
  EXPECT_NEAR(std::sqrt(squares / n - mean * mean), 0.1, 0.002);
}

// Class c's samples hold the ids 10c + (i % 3) and 500 + i % 7 (shared noise).
TopicCorpus separable(int classes, int per_class) {
  TopicCorpus c;
  for (int k = 0; k < classes; ++k) {
    c.classes.push_back(std::to_string(k));
    for (int i = 0; i < per_class; ++i) {
      TopicSample s{{10 * k + i % 3, 500 + i % 7}, k};
      (i % 5 == 4 ? c.test : c.train).push_back(s);
    }
  }
  return c;
}

TEST(BowHostTrainer, AStepChangesOnlyTheBatchsRowsAndAdagradStartsAtLr) {
  BowRecipe r;
  r.model.classes = 3;
  BowHostTrainer t(r, graph::Numerics::kF32);
  const std::vector<float> before_5 = t.table_row(5), before_7 = t.table_row(7);
  const TopicSample a{{5, 5, 9}, 1}, b{{9}, 2};
  const std::vector<const TopicSample*> batch{&a, &b};
  const std::vector<float> w = t.fc_w();
  t.step(batch);
  EXPECT_EQ(t.steps(), 1);
  EXPECT_EQ(t.table_row(7), before_7);  // not in the batch
  // Adagrad's first step moves every element with a non-zero gradient by lr (|g| / sqrt(g^2)).
  const std::vector<float>& after_5 = t.table_row(5);
  for (size_t i = 0; i < after_5.size(); ++i)
    EXPECT_NEAR(std::abs(after_5[i] - before_5[i]), 0.1, 1e-6) << i;
  for (size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(std::abs(t.fc_w()[i] - w[i]), 0.1, 1e-6) << i;
}

class BowHostNumerics : public ::testing::TestWithParam<graph::Numerics> {};

TEST_P(BowHostNumerics, LearnsASeparableCorpus) {
  BowRecipe r;
  r.batch = 8;
  r.epochs = 3;
  const TopicCorpus c = separable(4, 40);
  const std::vector<BowEpoch> e = train_bow_host(c, r, GetParam());
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].steps, 16);  // 128 training samples / 8
  EXPECT_LT(e[2].loss, e[0].loss);
  EXPECT_EQ(e[2].test_accuracy, 1.0);
}

INSTANTIATE_TEST_SUITE_P(Fp32AndChip, BowHostNumerics,
                         ::testing::Values(graph::Numerics::kF32, graph::Numerics::kChip));

}  // namespace
}  // namespace tessera::runtime
