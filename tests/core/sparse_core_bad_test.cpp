// The sparse core's faults (a SimFault naming the descriptor, its cycle and the reason) and its
// bad configurations and host calls.
#include <gtest/gtest.h>

#include "common/error.h"
#include "core/fault.h"
#include "sparse_test_util.h"

namespace tessera::core::test {
namespace {

constexpr int64_t kIds = 1000, kOffsets = 1100, kOut = 2000, kUnique = 3000, kCount = 3100,
                  kInverse = 3200, kRowGrads = 5000;

struct Fixture {
  CoreSpec spec = sparse_spec();
  ArchState st{spec};
  SparseCore sc{spec};
  int table = add_table(sc, st, "emb", 0, 10, 4);
};

// Runs the queue, expecting a SimFault at descriptor `pc` and cycle `cycle` whose text holds
// every one of `parts`.
void expect_fault(Fixture& f, int64_t pc, int64_t cycle, std::initializer_list<std::string> parts) {
  try {
    f.sc.run(f.st, 0);
    FAIL() << "no fault";
  } catch (const SimFault& e) {
    EXPECT_EQ(e.pc(), pc);
    EXPECT_EQ(e.cycle(), cycle);
    const std::string what = e.what();
    for (const std::string& p : parts) EXPECT_NE(what.find(p), std::string::npos) << what;
  }
  EXPECT_EQ(f.sc.queued(), 0);  // a fault empties the queue
}

TEST(SparseCoreFault, AnIdOutsideItsTableNamesTheTableTheIdTheDescriptorAndTheCycle_bad) {
  Fixture f;
  const SparseBags ok = write_bags(f.st, kIds, kOffsets, {{1}});
  const SparseBags bad = write_bags(f.st, kIds + 10, kOffsets + 10, {{2, 10}});
  f.sc.enqueue({SparseGather{f.table, ok, Combiner::Sum, SparseDest::Hbm, kOut}});
  f.sc.enqueue({SparseGather{f.table, bad, Combiner::Sum, SparseDest::Hbm, kOut}});
  // The first gather: 2 + meta 2 requests (15) + 1 row (12) + 1 output request (12) = 41.
  expect_fault(f, 1, 41, {"id 10 outside table 'emb' (10 rows)", "gather emb", "pc 1", "cycle 41"});
}

TEST(SparseCoreFault, AnUpdateOfAnIdOutsideItsTableFaults_bad) {
  Fixture f;
  write_words(f.st, kUnique, {3, 12});
  f.st.hbm.write(kCount, 2);
  f.sc.enqueue({SparseUpdate{f.table, kUnique, kCount, kRowGrads, SparseOptimizer::Sgd, 0.1}});
  expect_fault(f, 0, 0, {"id 12 outside table 'emb'", "update emb sgd"});
}

TEST(SparseCoreFault, MalformedOffsetsFault_bad) {
  Fixture f;
  write_words(f.st, kOffsets, {1, 2});
  f.sc.enqueue({SparseGather{f.table, {kIds, kOffsets, 1}, Combiner::Sum, SparseDest::Hbm, kOut}});
  expect_fault(f, 0, 0, {"offsets[0] = 1, not 0"});
  write_words(f.st, kOffsets, {0, 3, 2});
  f.sc.enqueue({SparseDedup{{kIds, kOffsets, 2}, kUnique, kCount, kInverse}});
  expect_fault(f, 0, 0, {"offsets[2] = 2 < offsets[1] = 3"});
}

TEST(SparseCoreFault, RangesOutsideHbmOrVectorMemoryFault_bad) {
  Fixture f;
  const SparseBags b = write_bags(f.st, kIds, kOffsets, {{1, 2}});
  f.sc.enqueue({SparseGather{f.table, b, Combiner::Sum, SparseDest::Hbm, f.st.hbm.size() - 2}});
  expect_fault(f, 0, 0, {"gather output: HBM words"});
  f.sc.enqueue({SparseGather{f.table, b, Combiner::Sum, SparseDest::Vmem, f.st.vmem.size() - 2}});
  expect_fault(f, 0, 0, {"gather output: vector memory words"});
  f.sc.enqueue({SparseGather{
      f.table, {f.st.hbm.size(), kOffsets, 1}, Combiner::Sum, SparseDest::Hbm, kOut}});
  expect_fault(f, 0, 0, {"ids: HBM words"});
}

TEST(SparseCoreFault, AnInverseIndexOutsideTheCountFaults_bad) {
  Fixture f;
  const SparseBags b = write_bags(f.st, kIds, kOffsets, {{1, 2}});
  write_words(f.st, kInverse, {0, 2});
  f.st.hbm.write(kCount, 2);
  f.sc.enqueue({SparseScatterAdd{f.table, b, Combiner::Sum, 4000, kInverse, kCount, kRowGrads}});
  expect_fault(f, 0, 0, {"inverse[1] = 2 outside the 2 distinct ids"});
}

TEST(SparseCoreFault, AWaitNothingCanSatisfyFaultsInsteadOfHanging_bad) {
  Fixture f;
  f.sc.signal(2, 50);
  f.sc.enqueue({SparseWait{2, 2}});
  expect_fault(f, 0, 0, {"wait on sparse-core flag 2 for 2 can never finish: the flag is 0"});
}

TEST(SparseCoreBadInput, EnqueueRejectsUnknownTablesFlagsAndAFullQueue_bad) {
  Fixture f;
  const SparseBags b{kIds, kOffsets, 1};
  EXPECT_THROW(f.sc.enqueue({SparseGather{5, b, Combiner::Sum, SparseDest::Hbm, kOut}}), Error);
  EXPECT_THROW(f.sc.enqueue({SparseGather{f.table, b, Combiner::Sum, SparseDest::Hbm, kOut},
                             f.spec.sync_flags}),
               Error);
  EXPECT_THROW(f.sc.enqueue({SparseWait{4, 1}}), Error);  // core.sparse.flags is 4
  EXPECT_THROW(f.sc.signal(-1, 0), Error);
  for (int i = 0; i < 8; ++i) f.sc.enqueue({SparseWait{0, 0}});
  EXPECT_THROW(f.sc.enqueue({SparseWait{0, 0}}), Error);  // core.sparse.queue is 8
  EXPECT_THROW(f.sc.set_adagrad_step(f.table, -1), Error);
}

TEST(SparseCoreBadInput, TablesMustBeNonEmptyAndInsideHbm_bad) {
  Fixture f;
  EXPECT_THROW(f.sc.add_table({"empty", 0, 0, 4}, f.st.hbm.size()), Error);
  EXPECT_THROW(f.sc.add_table({"flat", 0, 4, 0}, f.st.hbm.size()), Error);
  EXPECT_THROW(f.sc.add_table({"past", f.st.hbm.size() - 8, 4, 4}, f.st.hbm.size()), Error);
}

void expect_config_error(const nlohmann::json& sparse, const std::string& key) {
  try {
    sparse_spec(sparse);
    FAIL() << "accepted " << sparse.dump();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
  }
}

TEST(SparseCoreConfig, BadValuesAreErrorsNamingTheKey_bad) {
  expect_config_error({{"hbm_request_bytes", 6}}, "core.sparse.hbm_request_bytes");
  expect_config_error({{"hbm_request_bytes", 0}}, "core.sparse.hbm_request_bytes");
  expect_config_error({{"hbm_outstanding", 0}}, "core.sparse.hbm_outstanding");
  expect_config_error({{"hbm_bytes_per_cycle", 0}}, "core.sparse.hbm_bytes_per_cycle");
  expect_config_error({{"simd_width", 0}}, "core.sparse.simd_width");
  expect_config_error({{"ids_per_cycle", -1}}, "core.sparse.ids_per_cycle");
  expect_config_error({{"flags", 65}}, "core.sparse.flags");
  expect_config_error({{"energy", {{"id_pj", -1}}}}, "core.sparse.energy.id_pj");
  expect_config_error({{"simd_width", "wide"}}, "core.sparse.simd_width");
  expect_config_error({{"simd_widht", 8}}, "core.sparse.simd_widht");
}

TEST(SparseCoreConfig, DefaultsAreReadWithoutASparseSection) {
  const CoreSpec spec = default_spec();
  EXPECT_EQ(spec.sparse.hbm_request_bytes, 64);
  EXPECT_EQ(spec.sparse.hbm_outstanding, 4096);
  EXPECT_EQ(spec.sparse.simd_width, 128);
  EXPECT_EQ(spec.sparse.ids_per_cycle, 16);
  EXPECT_EQ(spec.sparse.flags, 32);
}

}  // namespace
}  // namespace tessera::core::test
