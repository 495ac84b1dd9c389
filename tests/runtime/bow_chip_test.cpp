// The bag-of-words step on the simulated chip (runtime/bow_chip.h): the table's gather, dedup,
// scatter-add and sparse Adagrad on the sparse core, the dense layer and its Adagrad on the tensor
// core. A few steps (a partial last batch among them) are bit-identical to the host reference in
// chip numerics (runtime/bow_train.h): losses, the table rows touched and their Adagrad
// accumulators, fc.w, fc.b and theirs, and the test accuracy; on both forward hand-off paths.
// Bad input is refused with an Error naming it.
#include "runtime/bow_chip.h"

#include <algorithm>
#include <bit>
#include <set>

#include <gtest/gtest.h>

#include "common/error.h"
#include "compiler/compiler.h"
#include "graph/bow_model.h"
#include "runtime/chip_test_data.h"

namespace tessera::runtime {
namespace {

// fp32 values as bits (so -0 and +0 differ and NaNs compare).
std::vector<uint32_t> bits(const std::vector<float>& v) {
  std::vector<uint32_t> b;
  for (float x : v) b.push_back(std::bit_cast<uint32_t>(x));
  return b;
}

BowRecipe small_recipe() {
  BowRecipe r;
  r.model = graph::BowSpec{1000, 64, 5, 0.1};
  r.batch = 4;
  r.seed = 3;
  return r;
}

// Bags with repeated ids, ids shared between samples and bags of one id.
std::vector<TopicSample> samples() {
  std::vector<TopicSample> s;
  for (int i = 0; i < 15; ++i) {
    TopicSample t;
    t.label = i % 5;
    for (int k = 0; k <= i % 4; ++k) t.ids.push_back((37 * i + 11 * k) % 1000);
    if (i % 3 == 0) t.ids.push_back(t.ids.front());  // repeated
    t.ids.push_back(999 - i % 2);                    // shared
    s.push_back(t);
  }
  return s;
}

constexpr int64_t kMaxBag = 8;

class BowChip : public ::testing::TestWithParam<bool> {};

TEST_P(BowChip, StepsAreBitIdenticalToTheHostChipNumerics) {
  const bool vmem = GetParam();
  const BowRecipe r = small_recipe();
  BowChipOptions o;
  o.max_bag = kMaxBag;
  o.vmem_handoff_bytes = vmem ? 1 << 20 : 0;
  BowChipTrainer chip(r, chip_test::tpu_v2_like(), o);
  BowHostTrainer host(r, graph::Numerics::kChip);
  const std::vector<TopicSample> data = samples();
  std::set<int32_t> touched;
  // Batches of 4, 4, 4 and a partial 3.
  for (size_t first = 0; first < data.size(); first += 4) {
    SCOPED_TRACE("batch at " + std::to_string(first));
    std::vector<const TopicSample*> batch;
    for (size_t i = first; i < std::min(data.size(), first + 4); ++i) {
      batch.push_back(&data[i]);
      touched.insert(data[i].ids.begin(), data[i].ids.end());
    }
    const double want = host.step(batch);
    const double got = chip.step(batch);
    EXPECT_EQ(std::bit_cast<uint64_t>(got), std::bit_cast<uint64_t>(want)) << got << " " << want;
    EXPECT_EQ(bits(chip.fc_w()), bits(host.fc_w()));
    EXPECT_EQ(bits(chip.fc_b()), bits(host.fc_b()));
    EXPECT_EQ(bits(chip.fc_w_state()), bits(host.fc_w_state()));
    EXPECT_EQ(bits(chip.fc_b_state()), bits(host.fc_b_state()));
    for (int32_t id : touched) {
      ASSERT_EQ(bits(chip.table_row(id)), bits(host.table_row(id))) << "row " << id;
      ASSERT_EQ(bits(chip.table_state(id)), bits(host.table_state(id))) << "row " << id;
    }
  }
  // The steps ran back to back from cycle 0: their cycles add up to the later unit's end.
  const core::SparseCore& sparse = chip.core().machine().sparse();
  EXPECT_EQ(chip.figures().cycles, std::max(chip.core().cycles(), sparse.busy_until()));
  // A row no batch named is untouched: its initial values, no accumulation.
  EXPECT_EQ(bits(chip.table_row(500)), bits(graph::bow_table_row(r.model, r.seed, 500)));
  EXPECT_EQ(bits(chip.table_state(500)), bits(std::vector<float>(64, 0.0f)));
  EXPECT_EQ(sparse.adagrad_step(0), 4);

  const BowChipFigures& f = chip.figures();
  EXPECT_EQ(f.steps, 4);
  EXPECT_EQ(f.vmem_steps, vmem ? 4 : 0);
  EXPECT_EQ(f.vmem_handoff_bytes > 0, vmem);
  EXPECT_GT(f.sparse_busy, 0);
  EXPECT_EQ(f.sparse_busy + f.sparse_wait, sparse.stats().busy_cycles);  // no evaluation ran
  EXPECT_GT(f.overlap, 0);  // dedup runs during the tensor core's backward pass
  EXPECT_LE(f.overlap, f.sparse_busy);
  EXPECT_GT(f.cycles, 0);
  EXPECT_GE(f.cycles, f.tensor_cycles);
  EXPECT_GT(f.row_reads, 0);
  EXPECT_EQ(f.row_bytes, (f.row_reads + f.row_writes) * 256);  // 64 fp32 = 4 requests of 64 B

  // Evaluation on the chip (the inference program) finds the host's hits; figures are the steps'.
  EXPECT_EQ(chip.accuracy(data), host.accuracy(data));
  EXPECT_EQ(chip.figures().steps, 4);
}

INSTANTIATE_TEST_SUITE_P(HandOff, BowChip, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Vmem" : "Hbm"; });

TEST(BowChipBad, ATableTrainsWithAdagradOnly_bad) {
  const BowRecipe r = small_recipe();
  compiler::CompileOptions o;
  o.batch = 4;
  o.optimizer.kind = graph::OptimizerKind::kAdam;
  try {
    compiler::compile(graph::build_bow(r.model, 4, 16), core::CoreSpec{}, o);
    FAIL() << "compiled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Adagrad only"), std::string::npos) << e.what();
  }
}

TEST(BowChipBad, ALongerBagOrAnIdOutsideTheTableIsRefused_bad) {
  BowChipOptions o;
  o.max_bag = 2;
  BowChipTrainer chip(small_recipe(), core::CoreSpec{}, o);
  const TopicSample longer{{1, 2, 3}, 0}, outside{{1000}, 0};
  const std::vector<const TopicSample*> a{&longer}, b{&outside};
  try {
    chip.step(a);
    FAIL() << "stepped";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bag of 3 ids"), std::string::npos) << e.what();
  }
  try {
    chip.step(b);
    FAIL() << "stepped";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("id 1000 outside"), std::string::npos) << e.what();
  }
}

TEST(BowChipBad, AConfigWhoseHbmCannotHoldTheTableIsRefused_bad) {
  core::CoreSpec spec;
  spec.hbm_bytes = 1 << 20;  // the table alone needs 256 KiB, its accumulators as much again
  BowRecipe r = small_recipe();
  r.model.rows = 4096;
  BowChipOptions o;
  o.max_bag = 4;
  try {
    BowChipTrainer chip(r, spec, o);
    FAIL() << "built";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("HBM"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera::runtime
