// The sparse core's values against host references written here (PyTorch's embedding_bag and
// sparse-gradient SGD / Adagrad semantics): gather with each combiner, empty bags, repeated ids,
// de-duplication, scatter-add, both optimizers, and a whole sparse training step.
#include <algorithm>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "sparse_test_util.h"

namespace tessera::core::test {
namespace {

constexpr int64_t kRows = 10, kDim = 4;
constexpr int64_t kIds = 1000, kOffsets = 1100, kOut = 2000, kUnique = 3000, kCount = 3100,
                  kInverse = 3200, kGrads = 4000, kRowGrads = 5000, kState = 6000;

const std::vector<std::vector<uint32_t>> kBags = {{3, 1, 5}, {}, {2, 2, 7}, {9}, {5, 3}};

std::vector<float> reference_gather(const std::vector<std::vector<uint32_t>>& bags, Combiner c) {
  std::vector<float> out;
  for (const auto& bag : bags) {
    if (c == Combiner::None) {
      for (uint32_t id : bag)
        for (int64_t j = 0; j < kDim; ++j) out.push_back(table_value(id, j));
      continue;
    }
    for (int64_t j = 0; j < kDim; ++j) {
      float acc = 0.0f;
      for (uint32_t id : bag) acc += table_value(id, j);
      if (c == Combiner::Mean && !bag.empty()) acc /= static_cast<float>(bag.size());
      out.push_back(acc);
    }
  }
  return out;
}

struct Fixture {
  CoreSpec spec = sparse_spec();
  ArchState st{spec};
  SparseCore sc{spec};
  int table = add_table(sc, st, "emb", 0, kRows, kDim);
  SparseBags bags = write_bags(st, kIds, kOffsets, kBags);
};

class SparseGatherCombiner : public ::testing::TestWithParam<Combiner> {};

TEST_P(SparseGatherCombiner, MatchesTheHostReferenceWithEmptyBagsAndRepeatedIds) {
  Fixture f;
  const Combiner c = GetParam();
  f.sc.enqueue({SparseGather{f.table, f.bags, c, SparseDest::Hbm, kOut}});
  f.sc.run(f.st, 0);
  const std::vector<float> want = reference_gather(kBags, c);
  const std::vector<float> got = read_floats(f.st, kOut, static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i])) << "word " << i;
  if (c != Combiner::None) {  // the empty bag (bag 1) gives zeros
    for (int64_t j = 0; j < kDim; ++j) EXPECT_EQ(got[static_cast<size_t>(kDim + j)], 0.0f);
  }
}

INSTANTIATE_TEST_SUITE_P(Combiners, SparseGatherCombiner,
                         ::testing::Values(Combiner::Sum, Combiner::Mean, Combiner::None));

TEST(SparseCoreValues, GatherWithoutACombinerCopiesRowsBitForBit) {
  Fixture f;
  f.st.hbm.write(2 * kDim, 0x80000000u);  // -0.0 in row 2
  const SparseBags b = write_bags(f.st, kIds, kOffsets, {{2}});
  f.sc.enqueue({SparseGather{f.table, b, Combiner::None, SparseDest::Hbm, kOut}});
  f.sc.enqueue({SparseGather{f.table, b, Combiner::Sum, SparseDest::Hbm, kOut + kDim}});
  f.sc.run(f.st, 0);
  EXPECT_EQ(f.st.hbm.read(kOut), 0x80000000u);
  EXPECT_EQ(f.st.hbm.read(kOut + kDim), 0u);  // a sum starts at +0: +0 + -0 = +0
}

TEST(SparseCoreValues, GatherIntoVectorMemoryWritesTheSameWords) {
  Fixture f;
  f.sc.enqueue({SparseGather{f.table, f.bags, Combiner::Mean, SparseDest::Vmem, 64}});
  f.sc.run(f.st, 0);
  const std::vector<float> want = reference_gather(kBags, Combiner::Mean);
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(f.st.vmem[64 + static_cast<int64_t>(i)], std::bit_cast<uint32_t>(want[i]));
  EXPECT_EQ(f.st.hbm.read(kOut), 0u);  // nothing went to HBM
}

TEST(SparseCoreValues, DedupGivesAscendingDistinctIdsTheirCountAndTheInverse) {
  Fixture f;
  f.sc.enqueue({SparseDedup{f.bags, kUnique, kCount, kInverse}});
  f.sc.run(f.st, 0);
  std::vector<uint32_t> flat;
  for (const auto& b : kBags) flat.insert(flat.end(), b.begin(), b.end());
  const std::set<uint32_t> distinct(flat.begin(), flat.end());
  const std::vector<uint32_t> want(distinct.begin(), distinct.end());
  ASSERT_EQ(f.st.hbm.read(kCount), want.size());
  EXPECT_EQ(read_words(f.st, kUnique, static_cast<int64_t>(want.size())), want);
  const std::vector<uint32_t> inverse =
      read_words(f.st, kInverse, static_cast<int64_t>(flat.size()));
  for (size_t i = 0; i < flat.size(); ++i) EXPECT_EQ(want[inverse[i]], flat[i]) << "position " << i;
  EXPECT_EQ(f.sc.stats().unique_ids, static_cast<int64_t>(want.size()));
}

float bag_grad(int64_t bag, int64_t j) {
  return 0.25f * static_cast<float>(bag + 1) - 0.125f * static_cast<float>(j) + 0.01f;
}

// The coalesced gradient of every distinct id: its bags' gradients (divided by the bag's size
// for mean), summed in id-position order.
std::map<uint32_t, std::vector<float>> reference_scatter(Combiner c) {
  std::map<uint32_t, std::vector<float>> rows;
  for (size_t b = 0; b < kBags.size(); ++b)
    for (uint32_t id : kBags[b]) {
      auto& r = rows.try_emplace(id, std::vector<float>(kDim, 0.0f)).first->second;
      for (int64_t j = 0; j < kDim; ++j) {
        float g = bag_grad(static_cast<int64_t>(b), j);
        if (c == Combiner::Mean) g /= static_cast<float>(kBags[b].size());
        r[static_cast<size_t>(j)] += g;
      }
    }
  return rows;
}

void write_bag_grads(ArchState& st) {
  std::vector<float> g;
  for (size_t b = 0; b < kBags.size(); ++b)
    for (int64_t j = 0; j < kDim; ++j) g.push_back(bag_grad(static_cast<int64_t>(b), j));
  write_floats(st, kGrads, g);
}

class SparseScatterCombiner : public ::testing::TestWithParam<Combiner> {};

TEST_P(SparseScatterCombiner, SumsTheGradientsOfRepeatedIdsLikeACoalescedSparseGradient) {
  Fixture f;
  const Combiner c = GetParam();
  write_bag_grads(f.st);
  f.sc.enqueue({SparseDedup{f.bags, kUnique, kCount, kInverse}});
  f.sc.enqueue({SparseScatterAdd{f.table, f.bags, c, kGrads, kInverse, kCount, kRowGrads}});
  f.sc.run(f.st, 0);
  const auto want = reference_scatter(c);
  ASSERT_EQ(f.st.hbm.read(kCount), want.size());
  int64_t k = 0;
  for (const auto& [id, row] : want) {
    EXPECT_EQ(f.st.hbm.read(kUnique + k), id);
    const std::vector<float> got = read_floats(f.st, kRowGrads + k * kDim, kDim);
    for (int64_t j = 0; j < kDim; ++j)
      EXPECT_EQ(std::bit_cast<uint32_t>(got[static_cast<size_t>(j)]),
                std::bit_cast<uint32_t>(row[static_cast<size_t>(j)]))
          << "id " << id << " col " << j;
    ++k;
  }
}

INSTANTIATE_TEST_SUITE_P(Combiners, SparseScatterCombiner,
                         ::testing::Values(Combiner::Sum, Combiner::Mean));

TEST(SparseCoreValues, ScatterAddWithoutACombinerTakesOneGradientRowPerId) {
  Fixture f;
  const std::vector<std::vector<uint32_t>> bags = {{4, 4, 6}};
  const SparseBags b = write_bags(f.st, kIds, kOffsets, bags);
  write_floats(f.st, kGrads, {1, 2, 3, 4, 10, 20, 30, 40, 0.5f, 0.5f, 0.5f, 0.5f});
  f.sc.enqueue({SparseDedup{b, kUnique, kCount, kInverse}});
  f.sc.enqueue({SparseScatterAdd{f.table, b, Combiner::None, kGrads, kInverse, kCount, kRowGrads}});
  f.sc.run(f.st, 0);
  EXPECT_EQ(read_floats(f.st, kRowGrads, 8),
            (std::vector<float>{11, 22, 33, 44, 0.5f, 0.5f, 0.5f, 0.5f}));
}

TEST(SparseCoreValues, ADenseScatterAddWritesTheTableShapedGradient) {
  Fixture f;
  const SparseBags b = write_bags(f.st, kIds, kOffsets, {{4}, {4}, {6}});
  write_floats(f.st, kGrads, {1, 2, 3, 4, 10, 20, 30, 40, 0.5f, 0.5f, 0.5f, 0.5f});
  write_floats(f.st, kRowGrads, std::vector<float>(kRows * kDim, 7.0f));  // overwritten
  SparseScatterAdd add{f.table, b, Combiner::None, kGrads, 0, 0, kRowGrads};
  add.dense = true;
  f.sc.enqueue({add});
  f.sc.run(f.st, 0);
  std::vector<float> want(kRows * kDim, 0.0f);
  for (int64_t j = 0; j < kDim; ++j) {
    want[static_cast<size_t>(4 * kDim + j)] = 11.0f * static_cast<float>(j + 1);  // 1 + 10, ...
    want[static_cast<size_t>(6 * kDim + j)] = 0.5f;
  }
  EXPECT_EQ(read_floats(f.st, kRowGrads, kRows * kDim), want);
  EXPECT_EQ(f.sc.stats().scatter_adds, 1);
  // An id outside the table is a fault, as for the other descriptors.
  const SparseBags outside = write_bags(f.st, kIds, kOffsets, {{10}});
  add.in = outside;
  f.sc.enqueue({add});
  EXPECT_THROW(f.sc.run(f.st, 0), SimFault);
}

// Writes distinct ids {1, 4, 7} and their gradients; returns the gradients.
std::vector<float> write_row_grads(ArchState& st) {
  write_words(st, kUnique, {1, 4, 7});
  st.hbm.write(kCount, 3);
  std::vector<float> g;
  for (int64_t k = 0; k < 3; ++k)
    for (int64_t j = 0; j < kDim; ++j) g.push_back(0.3f * static_cast<float>(k - j) + 0.05f);
  write_floats(st, kRowGrads, g);
  return g;
}

TEST(SparseCoreValues, SgdUpdatesOnlyTheRowsOfTheGradient) {
  Fixture f;
  const std::vector<float> g = write_row_grads(f.st);
  const float lr = 0.1f;
  f.sc.enqueue({SparseUpdate{f.table, kUnique, kCount, kRowGrads, SparseOptimizer::Sgd, lr}});
  f.sc.run(f.st, 0);
  const std::vector<uint32_t> ids = {1, 4, 7};
  for (int64_t r = 0; r < kRows; ++r) {
    const auto it = std::find(ids.begin(), ids.end(), static_cast<uint32_t>(r));
    for (int64_t j = 0; j < kDim; ++j) {
      float want = table_value(r, j);
      if (it != ids.end())
        want = want + (-lr) * g[static_cast<size_t>((it - ids.begin()) * kDim + j)];
      EXPECT_EQ(f.st.hbm.read(r * kDim + j), std::bit_cast<uint32_t>(want)) << r << "," << j;
    }
  }
}

TEST(SparseCoreValues, AdagradFollowsPyTorchSparseAdagradOverSteps) {
  Fixture f;
  const std::vector<float> g = write_row_grads(f.st);
  const double lr = 0.1, lr_decay = 0.01;
  const float eps = 1e-10f;
  std::vector<float> p(kRows * kDim), s(kRows * kDim, 0.0f);
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t j = 0; j < kDim; ++j) p[static_cast<size_t>(r * kDim + j)] = table_value(r, j);
  const std::vector<uint32_t> ids = {1, 4, 7};
  for (int64_t t = 1; t <= 3; ++t) {
    SparseUpdate u{f.table, kUnique, kCount, kRowGrads, SparseOptimizer::Adagrad, lr, lr_decay};
    u.eps = eps;
    u.state = kState;
    f.sc.enqueue({u});
    f.sc.run(f.st, 0);
    // torch.optim.Adagrad, sparse branch: clr = lr / (1 + (step - 1) * lr_decay);
    // state_sum += g^2; std = sqrt(state_sum) + eps; param += -clr * g / std
    const auto clr = static_cast<float>(lr / (1 + static_cast<double>(t - 1) * lr_decay));
    for (size_t k = 0; k < ids.size(); ++k)
      for (int64_t j = 0; j < kDim; ++j) {
        const size_t at = ids[k] * kDim + static_cast<size_t>(j);
        const float gk = g[k * kDim + static_cast<size_t>(j)];
        s[at] = s[at] + gk * gk;
        p[at] = p[at] + (-clr) * (gk / (std::sqrt(s[at]) + eps));
      }
    EXPECT_EQ(f.sc.adagrad_step(f.table), t);
    for (int64_t i = 0; i < kRows * kDim; ++i) {
      EXPECT_EQ(f.st.hbm.read(i), std::bit_cast<uint32_t>(p[static_cast<size_t>(i)]))
          << t << " " << i;
      EXPECT_EQ(f.st.hbm.read(kState + i), std::bit_cast<uint32_t>(s[static_cast<size_t>(i)]));
    }
  }
}

TEST(SparseCoreValues, AdagradStepCountIsPerTableAndCanBeRestored) {
  Fixture f;
  const int other = add_table(f.sc, f.st, "other", 7000, 4, kDim);
  write_row_grads(f.st);
  SparseUpdate u{f.table, kUnique, kCount, kRowGrads, SparseOptimizer::Adagrad, 0.1};
  u.state = kState;
  f.sc.enqueue({u});
  f.sc.run(f.st, 0);
  EXPECT_EQ(f.sc.adagrad_step(f.table), 1);
  EXPECT_EQ(f.sc.adagrad_step(other), 0);
  f.sc.set_adagrad_step(f.table, 41);
  f.sc.enqueue({u});
  f.sc.run(f.st, 0);
  EXPECT_EQ(f.sc.adagrad_step(f.table), 42);
}

TEST(SparseCoreValues, AHugeTableCostsOnlyThePagesItsTouchedRowsLiveIn) {
  const CoreSpec spec = sparse_spec({}, {{"hbm", {{"bytes", 1 << 24}}}});
  ArchState st(spec);
  SparseCore sc(spec);
  // 2^16 rows x 4 words: 16 pages of table and 16 of accumulators, none written by the host.
  const int64_t rows = int64_t{1} << 16, base = int64_t{1} << 20, state = int64_t{1} << 21;
  const int t = sc.add_table({"big", base, rows, kDim}, st.hbm.size());
  write_words(st, kIds, {5, static_cast<uint32_t>(rows - 1)});
  write_words(st, kOffsets, {0, 2});
  st.hbm.write(kCount, 2);
  write_floats(st, kRowGrads, std::vector<float>(2 * kDim, 1.0f));
  const int64_t before = st.hbm.pages_allocated();
  sc.enqueue({SparseGather{t, {kIds, kOffsets, 1}, Combiner::Sum, SparseDest::Hbm, kOut}});
  SparseUpdate u{t, kIds, kCount, kRowGrads, SparseOptimizer::Adagrad, 0.5};
  u.state = state;
  sc.enqueue({u});
  sc.run(st, 0);
  EXPECT_EQ(read_floats(st, kOut, 1)[0], 0.0f);  // untouched rows read as zero
  // ids 5 and rows - 1 sit in the first and the last page of the table and of its accumulators.
  EXPECT_EQ(st.hbm.pages_allocated() - before, 4);
  EXPECT_NE(st.hbm.read(base + 5 * kDim), 0u);
  EXPECT_NE(st.hbm.read(state + (rows - 1) * kDim), 0u);
}

TEST(SparseCoreValues, ASparseTrainingStepMatchesTheHostReference) {
  // gather (mean) -> loss gradient g_b = out_b (loss sum of squares / 2) -> dedup -> scatter_add
  // -> SGD: the table after one step equals PyTorch's embedding_bag + sparse SGD.
  Fixture f;
  const float lr = 0.5f;
  f.sc.enqueue({SparseGather{f.table, f.bags, Combiner::Mean, SparseDest::Hbm, kGrads}});
  f.sc.enqueue({SparseDedup{f.bags, kUnique, kCount, kInverse}});
  f.sc.enqueue(
      {SparseScatterAdd{f.table, f.bags, Combiner::Mean, kGrads, kInverse, kCount, kRowGrads}});
  f.sc.enqueue({SparseUpdate{f.table, kUnique, kCount, kRowGrads, SparseOptimizer::Sgd, lr}});
  f.sc.run(f.st, 0);
  const std::vector<float> out = reference_gather(kBags, Combiner::Mean);
  std::map<uint32_t, std::vector<float>> grad;
  for (size_t b = 0; b < kBags.size(); ++b)
    for (uint32_t id : kBags[b]) {
      auto& r = grad.try_emplace(id, std::vector<float>(kDim, 0.0f)).first->second;
      for (int64_t j = 0; j < kDim; ++j)
        r[static_cast<size_t>(j)] +=
            out[b * kDim + static_cast<size_t>(j)] / static_cast<float>(kBags[b].size());
    }
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t j = 0; j < kDim; ++j) {
      float want = table_value(r, j);
      if (const auto it = grad.find(static_cast<uint32_t>(r)); it != grad.end())
        want = want + (-lr) * it->second[static_cast<size_t>(j)];
      EXPECT_EQ(f.st.hbm.read(r * kDim + j), std::bit_cast<uint32_t>(want)) << r << "," << j;
    }
}

}  // namespace
}  // namespace tessera::core::test
