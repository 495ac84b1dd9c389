// embedding_bag lowered to the sparse core: two training steps of the lowering's descriptors with
// a tensor core between them (it waits for the gather's flag, takes dy = the bag result, i.e. the
// loss 0.5 sum y^2, and hands dy back with dma.vh.sc) are bit-identical to the host executor's
// embedding_bag / embedding_bag_grad in chip numerics followed by sparse Adagrad on the distinct
// ids; on both hand-off paths and for every combiner.
#include "compiler/lower_sparse.h"

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/core.h"
#include "core/sparse_test_util.h"
#include "graph/executor.h"
#include "numerics/sparse_optimizer.h"

namespace tessera::compiler {
namespace {

using core::test::bits;
using numerics::Combiner;

constexpr int64_t kRows = 40, kDim = 8, kBags = 4, kCapacity = 12, kTableBase = 0;
constexpr int64_t kVmemOut = 64;  // vector-memory words of the bag result on the chip
constexpr int kReady = 3, kGrads = 1;

// Step s's bags: repeated ids, an empty bag, unused slots past offsets[B].
std::vector<int32_t> step_ids(int s) {
  return s == 0 ? std::vector<int32_t>{7, 3, 7, 39, 0, 3, 12, 0, 0, 0, 0, 0}
                : std::vector<int32_t>{3, 3, 5, 7, 21, 0, 0, 0, 0, 0, 0, 0};
}
std::vector<int32_t> step_offsets(int s) {
  return s == 0 ? std::vector<int32_t>{0, 3, 3, 6, 7} : std::vector<int32_t>{0, 2, 5, 5, 5};
}

// The tensor core's part: wait for the gather, bring the result into vector memory if it went to
// HBM, and write it back as dy with the sparse core's flag.
std::string tensor_core_program(const SparseBagPlan& p) {
  const int64_t words = p.out_words();
  std::string s = fmt::format("wait {}, 1\n", kReady);
  s += fmt::format("sli s1, {} ;; sli s2, {}\nsli s3, {}\n", p.dy, kVmemOut, words);
  if (p.to == core::SparseDest::Hbm)
    s += fmt::format("sli s4, {}\ndma.hv s2, s4, s3, 0\nwait 0, 1\n", p.out);
  s += fmt::format("dma.vh.sc s1, s2, s3, {}\nhalt\n", kGrads);
  return s;
}

class LowerSparse : public ::testing::TestWithParam<std::tuple<Combiner, bool>> {};

TEST_P(LowerSparse, TwoTrainingStepsMatchTheHostChipNumericsBitForBit) {
  const auto [combiner, to_vmem] = GetParam();
  const core::CoreSpec spec = core::test::sparse_spec({}, {{"hbm", {{"bytes", 1 << 22}}}});
  const SparseBagShape shape{0, kRows, kDim, kBags, kCapacity, combiner};
  const SparseBagPlan plan =
      plan_sparse_bag(shape, {kRows * kDim, kVmemOut, to_vmem ? 1 << 20 : 0, kReady, kGrads});
  ASSERT_EQ(plan.to, to_vmem ? core::SparseDest::Vmem : core::SparseDest::Hbm);
  const SparseBagOptimizer opt;  // Adagrad, lr 0.1

  // The host reference.
  graph::Graph g;
  const int ids = g.add_input("ids", {kCapacity}, graph::DType::kI32);
  const int offsets = g.add_input("offsets", {kBags + 1}, graph::DType::kI32);
  const int table = g.add_param("table", {kRows, kDim});
  const int y = g.add_node(graph::OpKind::kEmbeddingBag, {ids, offsets, table},
                           graph::Attrs::embedding_bag(combiner));
  const int dtable = g.add_node(graph::OpKind::kEmbeddingBagGrad, {y, ids, offsets},
                                graph::Attrs::embedding_bag(combiner, {kRows, kDim}));
  graph::Executor<float> host(g, graph::Numerics::kChip);
  std::vector<float> host_table(kRows * kDim), host_state(kRows * kDim, 0.0f);
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t c = 0; c < kDim; ++c) host_table[r * kDim + c] = core::test::table_value(r, c);

  const isa::Program program = core::test::assemble(tensor_core_program(plan), spec);
  std::unique_ptr<core::Core> chip;
  for (int step = 0; step < 2; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    host.set(table, host_table);
    host.set_labels(ids, step_ids(step));
    host.set_labels(offsets, step_offsets(step));
    host.run();
    const std::vector<float>& grad = host.get(dtable);
    const std::vector<int32_t> all = step_ids(step);
    const std::vector<int32_t> used(all.begin(), all.begin() + step_offsets(step).back());
    const float clr = numerics::adagrad_step_lr(opt.lr, opt.lr_decay, step + 1);
    for (int32_t id : std::set<int32_t>(used.begin(), used.end()))
      numerics::sparse_adagrad_row(&host_table[id * kDim], &host_state[id * kDim], &grad[id * kDim],
                                   kDim, clr, opt.eps);

    if (!chip) {
      chip = std::make_unique<core::Core>(spec, program);
      core::test::add_table(chip->machine().sparse(), chip->host_state(), "emb", kTableBase, kRows,
                            kDim);
    } else {
      chip->load(program);
    }
    core::SparseCore& sc = chip->machine().sparse();
    core::ArchState& st = chip->host_state();
    std::vector<uint32_t> w;
    for (int32_t v : step_offsets(step)) w.push_back(static_cast<uint32_t>(v));
    core::test::write_words(st, plan.in.offsets, w);
    w.clear();
    for (int32_t v : step_ids(step)) w.push_back(static_cast<uint32_t>(v));
    core::test::write_words(st, plan.in.ids, w);
    for (const core::SparseDescriptor& d : sparse_forward(plan)) sc.enqueue(d);
    sc.run(st, chip->cycles());
    chip->run();
    for (const core::SparseDescriptor& d : sparse_backward(plan, opt)) sc.enqueue(d);
    sc.run(st, chip->cycles());

    // Combiner none: the unit writes the rows of the ids in use only (lower_sparse.h).
    const std::vector<float>& want_y = host.get(y);
    const size_t y_words = combiner == Combiner::None
                               ? static_cast<size_t>(step_offsets(step).back() * kDim)
                               : want_y.size();
    for (size_t i = 0; i < y_words; ++i)
      ASSERT_EQ(st.vmem[kVmemOut + i], bits(want_y[i])) << "y word " << i;
    const std::vector<float> got_table = core::test::read_floats(st, kTableBase, kRows * kDim);
    const std::vector<float> got_state = core::test::read_floats(st, plan.state, kRows * kDim);
    for (size_t i = 0; i < host_table.size(); ++i) {
      ASSERT_EQ(bits(got_table[i]), bits(host_table[i])) << "table word " << i;
      ASSERT_EQ(bits(got_state[i]), bits(host_state[i])) << "state word " << i;
    }
  }
  EXPECT_EQ(chip->machine().sparse().adagrad_step(0), 2);
}

INSTANTIATE_TEST_SUITE_P(CombinersAndPaths, LowerSparse,
                         ::testing::Combine(::testing::Values(Combiner::Sum, Combiner::Mean,
                                                              Combiner::None),
                                            ::testing::Bool()));

TEST(LowerSparsePlan, TheThresholdChoosesTheHandOffAndBuffersDoNotOverlap) {
  const SparseBagShape shape{0, 100, 16, 8, 30, Combiner::Mean};
  const int64_t bytes = 8 * 16 * 4;
  EXPECT_EQ(plan_sparse_bag(shape, {1000, 0, bytes, 0, 0}).to, core::SparseDest::Vmem);
  EXPECT_EQ(plan_sparse_bag(shape, {1000, 0, bytes - 1, 0, 0}).to, core::SparseDest::Hbm);
  EXPECT_EQ(plan_sparse_bag(shape, {1000, -1, 1 << 30, 0, 0}).to, core::SparseDest::Hbm);
  const SparseBagPlan p = plan_sparse_bag(shape, {1000, -1, 0, 0, 0});
  const std::vector<std::pair<int64_t, int64_t>> ranges = {
      {p.in.offsets, 9}, {p.in.ids, 30},         {p.out, 128},
      {p.dy, 128},       {p.unique, 30},         {p.count, 1},
      {p.inverse, 30},   {p.row_grads, 30 * 16}, {p.state, 100 * 16}};
  int64_t at = 1000;
  for (const auto& [addr, words] : ranges) {
    EXPECT_EQ(addr, at);
    at += words;
  }
  EXPECT_EQ(p.end, at);
}

}  // namespace
}  // namespace tessera::compiler
