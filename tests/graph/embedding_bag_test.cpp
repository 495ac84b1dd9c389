// embedding_bag and embedding_bag_grad: documented shapes, hand-computed values in chip numerics
// (every combiner, an empty bag, repeated ids, ids past offsets[B]) and the errors.
#include <gtest/gtest.h>

#include "graph/executor.h"
#include "graph/graph.h"
#include "support/error_of.h"

namespace tessera::graph {
namespace {

using numerics::Combiner;
using testing::error_of;

struct BagGraph {
  Graph g;
  int ids, offsets, table, y, back;
  explicit BagGraph(Combiner c, int64_t n = 6, int64_t bags = 3) {
    ids = g.add_input("ids", {n}, DType::kI32);
    offsets = g.add_input("offsets", {bags + 1}, DType::kI32);
    table = g.add_param("table", {4, 2});
    y = g.add_node(OpKind::kEmbeddingBag, {ids, offsets, table}, Attrs::embedding_bag(c));
    back =
        g.add_node(OpKind::kEmbeddingBagGrad, {y, ids, offsets}, Attrs::embedding_bag(c, {4, 2}));
  }
};

TEST(EmbeddingBagShapes, BagsGiveOneRowPerBagAndNoneOnePerId) {
  const BagGraph sum(Combiner::Sum);
  EXPECT_EQ(sum.g.value(sum.y).shape, (Shape{3, 2}));
  const BagGraph none(Combiner::None);
  EXPECT_EQ(none.g.value(none.y).shape, (Shape{6, 2}));
  EXPECT_EQ(none.g.value(none.back).shape, (Shape{4, 2}));
  EXPECT_NE(none.g.dump().find("combiner=none"), std::string::npos);
}

TEST(EmbeddingBagShapes, BadInputsAreNamed) {
  Graph g;
  const int ids = g.add_input("ids", {6}, DType::kI32);
  const int fids = g.add_input("fids", {6});
  const int one = g.add_input("one", {1}, DType::kI32);
  const int offsets = g.add_input("offsets", {3}, DType::kI32);
  const int table = g.add_param("table", {4, 2});
  auto bag = [&](int a, int b, int t) {
    return error_of([&] { g.add_node(OpKind::kEmbeddingBag, {a, b, t}, {}); });
  };
  EXPECT_NE(bag(fids, offsets, table).find("must be i32"), std::string::npos);
  EXPECT_NE(bag(ids, one, table).find("B + 1 >= 2"), std::string::npos);
  EXPECT_NE(bag(ids, offsets, fids).find("table"), std::string::npos);
  const int y = g.add_node(OpKind::kEmbeddingBag, {ids, offsets, table}, {});
  EXPECT_NE(error_of([&] {
              g.add_node(OpKind::kEmbeddingBagGrad, {y, ids, offsets},
                         Attrs::embedding_bag(Combiner::None, {4, 2}));
            }).find("not embedding_bag's output shape [6, 2]"),
            std::string::npos);
}

// Rows (0, 1), (10, 11), (20, 21), (30, 31); the gradient node takes the output itself as dy.
struct BagRun {
  std::vector<float> y, back;
};
BagRun run(BagGraph& b, const std::vector<int32_t>& ids, const std::vector<int32_t>& offsets) {
  Executor<float> ex(b.g, Numerics::kChip);
  ex.set(b.table, {0, 1, 10, 11, 20, 21, 30, 31});
  ex.set_labels(b.ids, ids);
  ex.set_labels(b.offsets, offsets);
  ex.run();
  return {ex.get(b.y), ex.get(b.back)};
}

// Bags {3, 0, 3}, {} and {1}; ids[4, 6) are past offsets[3] and unused.
const std::vector<int32_t> kIds = {3, 0, 3, 1, 2, 2}, kOffsets = {0, 3, 3, 4};

TEST(EmbeddingBagValues, SumCombinesInIdOrderAndScattersEachIdsShare) {
  BagGraph b(Combiner::Sum);
  const BagRun r = run(b, kIds, kOffsets);
  EXPECT_EQ(r.y, (std::vector<float>{60, 63, 0, 0, 10, 11}));
  EXPECT_EQ(r.back, (std::vector<float>{60, 63, 10, 11, 0, 0, 120, 126}));
}

TEST(EmbeddingBagValues, MeanDividesTheBagAndEachIdsGradientByItsSize) {
  BagGraph b(Combiner::Mean);
  const BagRun r = run(b, kIds, kOffsets);
  EXPECT_EQ(r.y, (std::vector<float>{60.0f / 3, 63.0f / 3, 0, 0, 10, 11}));
  const float g0 = (60.0f / 3) / 3, g1 = (63.0f / 3) / 3;
  EXPECT_EQ(r.back, (std::vector<float>{g0, g1, 10, 11, 0, 0, 0.0f + g0 + g0, 0.0f + g1 + g1}));
}

TEST(EmbeddingBagValues, NoneGivesEveryIdsRowAndZerosPastTheLastOffset) {
  BagGraph b(Combiner::None);
  const BagRun r = run(b, kIds, kOffsets);
  EXPECT_EQ(r.y, (std::vector<float>{30, 31, 0, 1, 30, 31, 10, 11, 0, 0, 0, 0}));
  EXPECT_EQ(r.back, (std::vector<float>{0, 1, 10, 11, 0, 0, 60, 62}));
}

TEST(EmbeddingBagValues, BadOffsetsAndIdsNameTheirPosition) {
  BagGraph b(Combiner::Sum);
  EXPECT_EQ(error_of([&] { run(b, kIds, {1, 3, 3, 4}); }), "embedding_bag: offsets[0] is 1, not 0");
  EXPECT_EQ(error_of([&] {
              run(b, kIds, {0, 3, 2, 4});
            }),
            "embedding_bag: offsets[2] = 2 is below offsets[1] or past the 6 ids");
  EXPECT_EQ(error_of([&] {
              run(b, kIds, {0, 3, 3, 7});
            }),
            "embedding_bag: offsets[3] = 7 is below offsets[2] or past the 6 ids");
  EXPECT_EQ(error_of([&] {
              run(b, {3, 4, 3, 1, 2, 2}, kOffsets);
            }),
            "embedding_bag: id 4 at position 1 is outside [0, 4)");
  // Unused ids past offsets[B] are not checked.
  EXPECT_NO_THROW(run(b, {3, 0, 3, 1, -1, 99}, kOffsets));
}

}  // namespace
}  // namespace tessera::graph
