// Tables that persist over steps on their owners (system/sparse_shard_tables.h): two training
// steps (lookup, row gradients back to their owners, the owners' SGD or Adagrad update) give bit
// for bit the rows, accumulators and lookups of one sparse core that scatter-adds each
// processor's bags into partial sums and adds them in processor order (both placements, rows not
// divisible by the processors, tables with fewer rows than processors, empty bags, repeated ids,
// every id on one owner, every combiner, two cores per chip, one or two host threads); ids are
// de-duplicated before the exchanges; and the errors.
#include <bit>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.h"
#include "core/sparse_core.h"
#include "core/state.h"
#include "small_spec.h"
#include "sparse_shard_cases.h"
#include "support/error_of.h"
#include "system/sparse_shard_tables.h"

namespace tessera::system {
namespace {

using numerics::Combiner;
using Grads = std::vector<std::vector<std::vector<float>>>;

size_t at(int64_t i) {
  return static_cast<size_t>(i);
}

// The gradient of processor p's result row k (of `rows`) of table t in step s.
Grads make_grads(const std::vector<std::vector<LookupBags>>& bags, Combiner c, int step) {
  Grads g(bags.size());
  for (size_t p = 0; p < bags.size(); ++p)
    for (size_t t = 0; t < kTables.size(); ++t) {
      const LookupBags& b = bags[p][t];
      const size_t rows = c == Combiner::None ? b.ids.size() : b.offsets.size() - 1;
      std::vector<float> v(rows * at(kTables[t].dim));
      for (size_t i = 0; i < v.size(); ++i)
        v[i] = std::ldexp(
                   static_cast<float>((step * 13 + static_cast<int>(p * 7 + t * 3 + i * 5)) % 23) -
                       11.0f,
                   -4) +
               0.03f;
      g[p].push_back(std::move(v));
    }
  return g;
}

// One sparse core holding every table whole (and its accumulators), stepping as the header
// says: per processor dedup + scatter_add to partial sums, then dedup, scatter_add (none) of the
// partial sums in processor order and the update.
class OneCore {
 public:
  explicit OneCore(const ShardedOptimizer& opt)
      : m_st(small_spec()), m_sc(small_spec()), m_opt(opt) {
    for (size_t t = 0; t < kTables.size(); ++t) {
      const ShardedTable& tab = kTables[t];
      const int64_t base = alloc(tab.rows * tab.dim);
      m_state.push_back(alloc(tab.rows * tab.dim));
      std::vector<uint32_t> row(at(tab.dim));
      for (int64_t r = 0; r < tab.rows; ++r) {
        for (int64_t k = 0; k < tab.dim; ++k)
          row[at(k)] = std::bit_cast<uint32_t>(value(static_cast<int>(t), r, k));
        m_st.hbm.write_block(base + r * tab.dim, row.data(), tab.dim);
      }
      m_base.push_back(base);
      m_sc.add_table({tab.name, base, tab.rows, tab.dim}, m_st.hbm.size());
    }
    m_fixed = m_next;
  }

  std::vector<float> lookup(int t, const LookupBags& b, Combiner c) {
    const int64_t n = static_cast<int64_t>(b.ids.size()),
                  bags = static_cast<int64_t>(b.offsets.size()) - 1;
    const int64_t ids = put(b.ids), offsets = put(b.offsets);
    const int64_t words = (c == Combiner::None ? n : bags) * kTables[at(t)].dim;
    const int64_t out = alloc(words);
    m_sc.enqueue({core::SparseGather{t, {ids, offsets, bags}, c, core::SparseDest::Hbm, out}});
    m_sc.run(m_st, 0);
    return read(out, words);
  }

  void step(const std::vector<std::vector<LookupBags>>& bags, const Grads& g, Combiner c) {
    for (size_t t = 0; t < kTables.size(); ++t) {
      const int64_t dim = kTables[t].dim;
      std::vector<uint32_t> all_ids, all_offsets = {0};
      std::vector<float> all_rows;
      for (size_t p = 0; p < bags.size(); ++p) {
        const LookupBags& b = bags[p][t];
        const int64_t n = static_cast<int64_t>(b.ids.size()),
                      nb = static_cast<int64_t>(b.offsets.size()) - 1;
        const int64_t ids = put(b.ids), offsets = put(b.offsets);
        const int64_t unique = alloc(n), count = alloc(1), inverse = alloc(n),
                      grads = put_floats(g[p][t]), partial = alloc(n * dim);
        m_sc.enqueue({core::SparseDedup{{ids, offsets, nb}, unique, count, inverse}});
        m_sc.enqueue({core::SparseScatterAdd{
            static_cast<int>(t), {ids, offsets, nb}, c, grads, inverse, count, partial}});
        m_sc.run(m_st, 0);
        const int64_t u = m_st.hbm.read(count);
        for (int64_t k = 0; k < u; ++k) all_ids.push_back(m_st.hbm.read(unique + k));
        all_offsets.push_back(static_cast<uint32_t>(all_ids.size()));
        const std::vector<float> rows = read(partial, u * dim);
        all_rows.insert(all_rows.end(), rows.begin(), rows.end());
      }
      const int64_t n = static_cast<int64_t>(all_ids.size());
      const int64_t P = static_cast<int64_t>(bags.size());
      const int64_t ids = put(all_ids), offsets = put(all_offsets), rows = put_floats(all_rows);
      const int64_t unique = alloc(n), count = alloc(1), inverse = alloc(n),
                    summed = alloc(n * dim);
      m_sc.enqueue({core::SparseDedup{{ids, offsets, P}, unique, count, inverse}});
      m_sc.enqueue({core::SparseScatterAdd{
          static_cast<int>(t), {ids, offsets, P}, Combiner::None, rows, inverse, count, summed}});
      m_sc.enqueue({core::SparseUpdate{static_cast<int>(t), unique, count, summed, m_opt.kind,
                                       m_opt.lr, m_opt.lr_decay, m_opt.eps, m_state[t]}});
      m_sc.run(m_st, 0);
    }
    m_next = m_fixed;
  }

  std::vector<float> row(int t, int64_t r) {
    return read(m_base[at(t)] + r * kTables[at(t)].dim, kTables[at(t)].dim);
  }
  std::vector<float> acc(int t, int64_t r) {
    return read(m_state[at(t)] + r * kTables[at(t)].dim, kTables[at(t)].dim);
  }

 private:
  int64_t alloc(int64_t words) {
    const int64_t a = m_next;
    m_next += std::max<int64_t>(words, 1);
    return a;
  }
  int64_t put(const std::vector<uint32_t>& v) {
    const int64_t a = alloc(static_cast<int64_t>(v.size()));
    m_st.hbm.write_block(a, v.data(), static_cast<int64_t>(v.size()));
    return a;
  }
  int64_t put_floats(const std::vector<float>& v) {
    const int64_t a = alloc(static_cast<int64_t>(v.size()));
    m_st.hbm.write_block(a, reinterpret_cast<const uint32_t*>(v.data()),
                         static_cast<int64_t>(v.size()));
    return a;
  }
  std::vector<float> read(int64_t addr, int64_t words) {
    std::vector<float> v(at(words));
    m_st.hbm.read_block(addr, reinterpret_cast<uint32_t*>(v.data()), words);
    return v;
  }

  core::ArchState m_st;
  core::SparseCore m_sc;
  ShardedOptimizer m_opt;
  std::vector<int64_t> m_base, m_state;
  int64_t m_next = 0, m_fixed = 0;
};

// The second step's bags: the first's, shifted, so that rows updated in step 1 are read again.
std::vector<std::vector<LookupBags>> second_bags(int processors) {
  auto bags = edge_bags(processors);
  for (auto& mine : bags)
    for (size_t t = 0; t < mine.size(); ++t)
      for (uint32_t& id : mine[t].ids) id = static_cast<uint32_t>((id + 1) % kTables[t].rows);
  return bags;
}

struct Case {
  int chips, cores;
  ShardPlacement placement;
  Combiner combiner;
  core::SparseOptimizer optimizer;
  int threads;
};

class ShardedTraining : public ::testing::TestWithParam<Case> {};

TEST_P(ShardedTraining, TwoStepsEqualOneSparseCoreAddingPartialSumsInProcessorOrder) {
  const Case c = GetParam();
  const SystemSpec sys = small_ring(c.chips, c.cores);
  const int P = sys.processors();
  ShardedOptimizer opt;
  opt.kind = c.optimizer;
  opt.lr = 0.25;
  opt.lr_decay = c.optimizer == core::SparseOptimizer::Adagrad ? 0.5 : 0;
  ThreadPool pool(c.threads);
  ShardedTables sharded(small_spec(), sys, ShardMap(c.placement, P), kTables, value, opt, &pool);
  OneCore ref(opt);
  int64_t start = 0;
  for (int step = 0; step < 2; ++step) {
    const auto bags = step == 0 ? edge_bags(P) : second_bags(P);
    const ShardedLookupResult l = sharded.lookup(bags, c.combiner, start);
    for (int p = 0; p < P; ++p)
      for (int t = 0; t < 3; ++t)
        expect_bits_equal(l.pooled[at(p)][at(t)], ref.lookup(t, bags[at(p)][at(t)], c.combiner),
                          "step " + std::to_string(step) + " lookup processor " +
                              std::to_string(p) + " table " + std::to_string(t));
    EXPECT_GT(l.cycles, start);
    const Grads g = make_grads(bags, c.combiner, step);
    const ShardedBackwardResult b = sharded.backward(g, l.cycles);
    ref.step(bags, g, c.combiner);
    EXPECT_LE(l.cycles, b.span.scatter);
    EXPECT_LE(b.span.scatter, b.span.grads);
    EXPECT_LE(b.span.grads, b.span.update);
    EXPECT_EQ(b.cycles, b.span.update);
    EXPECT_GT(b.rows_updated, 0);
    if (P > 1) {
      EXPECT_GT(b.grad_bytes, 0u);
    }
    start = b.cycles;
    for (int t = 0; t < 3; ++t)
      for (int64_t r = 0; r < kTables[at(t)].rows; ++r) {
        const std::string what = "step " + std::to_string(step) + " table " + std::to_string(t) +
                                 " row " + std::to_string(r);
        expect_bits_equal(sharded.row(t, r), ref.row(t, r), what);
        if (c.optimizer == core::SparseOptimizer::Adagrad)
          expect_bits_equal(sharded.accumulators(t, r), ref.acc(t, r), what + " accumulators");
      }
  }
  if (c.optimizer == core::SparseOptimizer::Adagrad) {
    for (int t = 0; t < 3; ++t) EXPECT_EQ(sharded.adagrad_step(t), 2) << t;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ShardedTraining,
    ::testing::Values(
        Case{1, 1, ShardPlacement::kMod, Combiner::Sum, core::SparseOptimizer::Adagrad, 1},
        Case{4, 1, ShardPlacement::kMod, Combiner::Sum, core::SparseOptimizer::Sgd, 1},
        Case{4, 1, ShardPlacement::kMod, Combiner::Sum, core::SparseOptimizer::Adagrad, 2},
        Case{4, 1, ShardPlacement::kMod, Combiner::Mean, core::SparseOptimizer::Adagrad, 1},
        Case{4, 1, ShardPlacement::kMod, Combiner::None, core::SparseOptimizer::Sgd, 2},
        Case{3, 1, ShardPlacement::kMod, Combiner::Sum, core::SparseOptimizer::Adagrad, 1},
        Case{4, 1, ShardPlacement::kTable, Combiner::Sum, core::SparseOptimizer::Adagrad, 2},
        Case{4, 1, ShardPlacement::kTable, Combiner::Mean, core::SparseOptimizer::Sgd, 1},
        Case{2, 2, ShardPlacement::kMod, Combiner::Mean, core::SparseOptimizer::Adagrad, 2},
        Case{2, 2, ShardPlacement::kTable, Combiner::None, core::SparseOptimizer::Adagrad, 1}),
    [](const ::testing::TestParamInfo<Case>& i) {
      return std::to_string(i.param.chips) + "x" + std::to_string(i.param.cores) + "_" +
             shard_placement_name(i.param.placement) + "_" +
             std::string(numerics::combiner_name(i.param.combiner)) + "_" +
             (i.param.optimizer == core::SparseOptimizer::Sgd ? "sgd" : "adagrad") + "_" +
             std::to_string(i.param.threads) + "threads";
    });

TEST(ShardedTrainingThreads, TimesAndTrafficDoNotDependOnTheHostThreads) {
  const SystemSpec sys = small_ring(4, 1);
  const auto bags = edge_bags(4);
  const Grads g = make_grads(bags, Combiner::Sum, 0);
  ShardedOptimizer opt;
  opt.kind = core::SparseOptimizer::Adagrad;
  std::vector<ShardedBackwardResult> runs;
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    ShardedTables s(small_spec(), sys, ShardMap(ShardPlacement::kMod, 4), kTables, value, opt,
                    &pool);
    const ShardedLookupResult l = s.lookup(bags, Combiner::Sum);
    runs.push_back(s.backward(g, l.cycles));
  }
  EXPECT_EQ(runs[0].cycles, runs[1].cycles);
  EXPECT_EQ(runs[0].span.grads, runs[1].span.grads);
  EXPECT_EQ(runs[0].grad_bytes, runs[1].grad_bytes);
  EXPECT_EQ(runs[0].packets, runs[1].packets);
  EXPECT_EQ(runs[0].rows_updated, runs[1].rows_updated);
}

TEST(ShardedTrainingTraffic, EachRequesterSendsEachIdOnceAndOneGradientRowPerId) {
  // Two chips on a line, one table of 8 rows of 4 words, mod placement: processor 0 looks up
  // ids 1, 3, 3 (owned by 1) and 2 (its own); processor 1 looks up 0 and 0 (owned by 0).
  const SystemSpec sys = small_ring(2, 1);
  const std::vector<ShardedTable> tables = {{"t", 8, 4}};
  const std::vector<std::vector<LookupBags>> bags = {{{{0, 4}, {1, 3, 3, 2}}}, {{{0, 2}, {0, 0}}}};
  ShardedOptimizer opt;
  ShardedTables s(small_spec(), sys, ShardMap(ShardPlacement::kMod, 2), tables, value, opt);
  const ShardedLookupResult l = s.lookup(bags, Combiner::Sum);
  EXPECT_EQ(l.id_bytes, 4u * (2 + 1));       // ids 1 and 3 to processor 1, 0 once to processor 0
  EXPECT_EQ(l.row_bytes, 4u * 4 * (2 + 1));  // their rows back
  const Grads g = {{std::vector<float>(4, 1.0f)}, {std::vector<float>(4, 0.5f)}};
  const ShardedBackwardResult b = s.backward(g, l.cycles);
  EXPECT_EQ(b.grad_bytes, 4u * 4 * (2 + 1));  // one partial row per distinct id
  EXPECT_EQ(b.busiest_link_grad_bytes, 4u * 4 * 2);
  EXPECT_EQ(b.rows_updated, 4);  // rows 1, 3 on processor 1; 0, 2 on processor 0
  // scatter, on either processor (built-in sparse-core figures, as the lookup's route): decode 4;
  // the ids, offsets, inverse, count and gradients are 5 requests (a stream of 501 cycles);
  // max(ceil(ids / 16), ceil(ids x 4 / 128)) = 1; the partial rows (3 or 1 rows of 16 B) one
  // request (501).
  EXPECT_EQ(b.span.scatter, l.cycles + 4 + 501 + 1 + 501);
  // SGD, lr 0.01: row 3 received 1 + 1 from processor 0's two positions; row 0 0.5 + 0.5.
  EXPECT_EQ(s.row(0, 3)[0], value(0, 3, 0) + -0.01f * 2.0f);
  EXPECT_EQ(s.row(0, 0)[1], value(0, 0, 1) + -0.01f * 1.0f);
  EXPECT_EQ(s.row(0, 5)[2], value(0, 5, 2));  // never touched
}

TEST(ShardedTrainingErrors, ABackwardNeedsALookupAndGradientsOfItsShape_bad) {
  using testing::error_of;
  const SystemSpec sys = small_ring(2, 1);
  const std::vector<ShardedTable> tables = {{"emb", 8, 4}};
  ShardedTables s(small_spec(), sys, ShardMap(ShardPlacement::kMod, 2), tables, value, {});
  const Grads g = {{std::vector<float>(4)}, {std::vector<float>(4)}};
  EXPECT_NE(error_of([&] { s.backward(g, 0); }).find("without a lookup"), std::string::npos);
  s.lookup({{{{0, 2}, {1, 2}}}, {{{0, 1}, {3}}}}, Combiner::Sum);
  EXPECT_NE(error_of([&] {
              s.backward({{std::vector<float>(4)}}, 0);
            }).find("gradients for 1 processors, the system has 2"),
            std::string::npos);
  const std::string shape = error_of([&] {
    s.backward({{std::vector<float>(3)}, {std::vector<float>(4)}}, 0);
  });
  EXPECT_NE(shape.find("processor 0 table 'emb': 3 gradient words, its lookup gave 4"),
            std::string::npos)
      << shape;
  EXPECT_NE(error_of([&] {
              ShardedTables(small_spec(), sys, ShardMap(ShardPlacement::kMod, 3), tables, value,
                            {});
            }).find("over 3 processors on a system of 2"),
            std::string::npos);
  core::CoreSpec tiny = small_spec();
  tiny.hbm_bytes = 4096;  // 1024 words: the 4 x 1024 rows over 2 processors need 2048 each
  const std::string hbm = error_of([&] {
    ShardedTables(tiny, sys, ShardMap(ShardPlacement::kMod, 2), {{"big", 1024, 4}}, value, {});
  });
  EXPECT_NE(hbm.find("more than the 1024 words of its HBM"), std::string::npos) << hbm;
}

}  // namespace
}  // namespace tessera::system
