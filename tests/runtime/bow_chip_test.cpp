// The bag-of-words step on the simulated chip (runtime/bow_chip.h): the table's gather, dedup,
// scatter-add and sparse Adagrad on the sparse core, the dense layer and its Adagrad on the tensor
// core. A few steps (a partial last batch among them) are bit-identical to the host reference in
// chip numerics (runtime/bow_train.h): losses, the table rows touched and their Adagrad
// accumulators, fc.w, fc.b and theirs, and the test accuracy; on both forward hand-off paths.
// Steps, a checkpoint and a resumed trainer's steps are bit-identical to the steps uninterrupted.
// Bad input (and a checkpoint of another model or shape) is refused with an Error naming it.
#include "runtime/bow_chip.h"

#include <algorithm>
#include <bit>
#include <set>

#include <gtest/gtest.h>

#include "common/error.h"
#include "compiler/compiler.h"
#include "graph/bow_model.h"
#include "runtime/checkpoint.h"
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
  core::CoreSpec spec = chip_test::tpu_v2_like();
  spec.sparse.vmem_handoff_bytes = vmem ? 1 << 20 : 0;
  BowChipTrainer chip(r, spec, o);
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

// The batches of samples() (4, 4, 4 and a partial 3) from batch `first` to `end`; the losses.
std::vector<double> steps(BowChipTrainer& chip, const std::vector<TopicSample>& data, size_t first,
                          size_t end) {
  std::vector<double> losses;
  for (size_t b = first; b < end; ++b) {
    std::vector<const TopicSample*> batch;
    for (size_t i = 4 * b; i < std::min(data.size(), 4 * b + 4); ++i) batch.push_back(&data[i]);
    losses.push_back(chip.step(batch));
  }
  return losses;
}

BowChipOptions small_options() {
  BowChipOptions o;
  o.max_bag = kMaxBag;
  return o;
}

TEST(BowChipCheckpoint, StepsASaveAndAResumeAreBitIdenticalToTheStepsUninterrupted) {
  const std::vector<TopicSample> data = samples();
  const core::CoreSpec spec = chip_test::tpu_v2_like();
  BowChipTrainer whole(small_recipe(), spec, small_options());
  const std::vector<double> want = steps(whole, data, 0, 4);
  for (size_t k : {size_t{1}, size_t{3}}) {
    SCOPED_TRACE("saved after step " + std::to_string(k));
    BowChipTrainer first(small_recipe(), spec, small_options());
    std::vector<double> got = steps(first, data, 0, k);
    EXPECT_EQ(first.accuracy(data), first.accuracy(data));  // evaluation touches no state
    // Through the file format's bytes.
    const Checkpoint c = decode_checkpoint(encode_checkpoint(first.checkpoint()), "mem");
    BowChipTrainer resumed(small_recipe(), spec, small_options());
    resumed.restore(c);
    EXPECT_EQ(resumed.steps(), static_cast<int64_t>(k));
    for (double l : steps(resumed, data, k, 4)) got.push_back(l);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_EQ(std::bit_cast<uint64_t>(got[i]), std::bit_cast<uint64_t>(want[i])) << "step " << i;
    EXPECT_EQ(bits(resumed.fc_w()), bits(whole.fc_w()));
    EXPECT_EQ(bits(resumed.fc_b()), bits(whole.fc_b()));
    EXPECT_EQ(bits(resumed.fc_w_state()), bits(whole.fc_w_state()));
    EXPECT_EQ(bits(resumed.fc_b_state()), bits(whole.fc_b_state()));
    for (const TopicSample& s : data)
      for (int32_t id : s.ids) {
        ASSERT_EQ(bits(resumed.table_row(id)), bits(whole.table_row(id))) << "row " << id;
        ASSERT_EQ(bits(resumed.table_state(id)), bits(whole.table_state(id))) << "row " << id;
      }
    EXPECT_EQ(resumed.steps(), 4);
    EXPECT_EQ(resumed.core().machine().sparse().adagrad_step(0), 4);
    EXPECT_EQ(resumed.accuracy(data), whole.accuracy(data));
    // The figures go on as the uninterrupted run's.
    const BowChipFigures &a = resumed.figures(), &b = whole.figures();
    EXPECT_EQ(a.steps, b.steps);
    EXPECT_EQ(a.cycles, b.cycles);
    EXPECT_EQ(a.sparse_busy, b.sparse_busy);
    EXPECT_EQ(a.row_bytes, b.row_bytes);
    EXPECT_EQ(a.host_link_bytes, b.host_link_bytes);
  }
}

TEST(BowChipCheckpointBad, ACheckpointOfAnotherModelOrShapeIsRefused_bad) {
  const std::vector<TopicSample> data = samples();
  BowRecipe wider = small_recipe();
  wider.model.dim = 32;
  BowChipTrainer other(wider, core::CoreSpec{}, small_options());
  steps(other, data, 0, 1);
  Checkpoint gpt;  // tensors, but no bow progress
  gpt.params = {std::vector<float>(4)};
  gpt.progress["epoch"] = 0;
  const std::pair<Checkpoint, const char*> cases[] = {
      {other.checkpoint(), "table rows of 64 words"},
      {gpt, "no bow progress"},
  };
  for (const auto& [c, want] : cases) {
    BowChipTrainer chip(small_recipe(), core::CoreSpec{}, small_options());
    try {
      chip.restore(c);
      FAIL() << "restored";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("not a checkpoint of this bow model"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
    EXPECT_EQ(chip.steps(), 0);
  }
  // The command checks the identity first: another shape is named by its key.
  try {
    check_identity("ckpt", bow_identity(wider, "c", "h"), bow_identity(small_recipe(), "c", "h"));
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dim"), std::string::npos) << e.what();
  }
  // A trainer that has stepped does not resume.
  BowChipTrainer stepped(small_recipe(), core::CoreSpec{}, small_options());
  steps(stepped, data, 0, 1);
  EXPECT_THROW(stepped.restore(stepped.checkpoint()), Error);
}

}  // namespace
}  // namespace tessera::runtime
