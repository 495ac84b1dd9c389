// The sparse core's cycles, counted by hand from sparse_core.h's timing model on sparse_spec()'s
// round figures (a stream of R HBM requests takes 9 + 3 R cycles), and both hand-off paths to the
// tensor core with their sync flags.
#include <gtest/gtest.h>

#include "sparse_test_util.h"

namespace tessera::core::test {
namespace {

constexpr int64_t kIds = 1000, kOffsets = 1100, kOut = 2000, kUnique = 3000, kCount = 3100,
                  kInverse = 3200, kGrads = 4000, kRowGrads = 5000, kState = 6000;

TEST(SparseCoreTiming, AnHbmStreamIsLatencyPlusItsRequestsAtTheSlowerOfBandwidthAndOutstanding) {
  const CoreSpec spec = sparse_spec();
  const SparseCore sc(spec);
  EXPECT_EQ(sc.hbm_stream(0), 0);
  EXPECT_EQ(sc.hbm_stream(1), 12);  // 10 + 2
  EXPECT_EQ(sc.hbm_stream(5), 24);  // 10 + 4 * 3 + 2
  EXPECT_EQ(sc.requests_of(16), 1);
  EXPECT_EQ(sc.requests_of(17), 2);
  // One request in flight: each waits for the previous one, 10 + 2 cycles apart.
  const SparseCore serial(sparse_spec({{"hbm_outstanding", 1}}));
  EXPECT_EQ(serial.hbm_stream(3), 10 + 2 * 12 + 2);
  // Many in flight: the bandwidth paces them, 2 cycles apart.
  const SparseCore wide(sparse_spec({{"hbm_outstanding", 64}}));
  EXPECT_EQ(wide.hbm_stream(3), 10 + 2 * 2 + 2);
}

struct Fixture {
  CoreSpec spec = sparse_spec();
  ArchState st{spec};
  SparseCore sc{spec};
  int table = add_table(sc, st, "emb", 0, 10, 4);
  SparseBags bags = write_bags(st, kIds, kOffsets, {{1, 2}, {3}});
};

TEST(SparseCoreTiming, GatherToHbmIsDecodeMetaRowsAndOutput) {
  Fixture f;
  f.sc.enqueue({SparseGather{f.table, f.bags, Combiner::Sum, SparseDest::Hbm, kOut}});
  // decode 2; meta: 3 ids + 3 offsets, 1 request each: 15; rows: 3 requests: 18 (front 3,
  // SIMD 12 / 4 = 3); output: 2 x 4 words = 2 requests: 15.
  EXPECT_EQ(f.sc.run(f.st, 0), 2 + 15 + 18 + 15);
  const SparseCoreStats& s = f.sc.stats();
  EXPECT_EQ(s.hbm_requests, 7);
  EXPECT_EQ(s.hbm_read_bytes, 5 * 16);
  EXPECT_EQ(s.hbm_write_bytes, 2 * 16);
  EXPECT_EQ(s.row_reads, 3);
  EXPECT_EQ(s.ids, 3);
  EXPECT_EQ(s.element_ops, 12);
  EXPECT_EQ(s.busy_cycles, 50);
  // 3 ids, 12 element ops, 1 descriptor, 112 HBM bytes
  const SparseCoreEnergy e = sparse_core_energy(f.spec.sparse, s, 30.0);
  EXPECT_DOUBLE_EQ(e.total, 3 * 2.0 + 12 * 0.9 + 10.0 + 112 * 30.0);
}

TEST(SparseCoreTiming, GatherToVectorMemoryUsesTheOnChipPath) {
  Fixture f;
  f.sc.enqueue({SparseGather{f.table, f.bags, Combiner::Sum, SparseDest::Vmem, 0}});
  // output: 5 + 32 B / 8 B per cycle
  EXPECT_EQ(f.sc.run(f.st, 0), 2 + 15 + 18 + 9);
  EXPECT_EQ(f.sc.stats().vmem_bytes, 32);
  EXPECT_EQ(f.sc.stats().hbm_write_bytes, 0);
}

TEST(SparseCoreTiming, TheSlowestOfRowsFrontEndAndSimdBoundsTheBody) {
  for (const Combiner c : {Combiner::Sum, Combiner::Mean}) {
    const CoreSpec spec = sparse_spec({{"simd_width", 1}});
    ArchState st(spec);
    SparseCore sc(spec);
    const int t = add_table(sc, st, "emb", 0, 10, 4);
    const SparseBags b = write_bags(st, kIds, kOffsets, {{1, 2, 3, 4, 5, 6}});
    sc.enqueue({SparseGather{t, b, c, SparseDest::Hbm, kOut}});
    // meta: 6 ids (2 requests) + 2 offsets (1): 18; rows 6 requests: 27; SIMD: 24 adds (+ 4
    // divides for mean); output 1 request: 12.
    const int64_t body = c == Combiner::Sum ? 27 : 28;
    EXPECT_EQ(sc.run(st, 0), 2 + 18 + body + 12) << numerics::combiner_name(c);
  }
}

TEST(SparseCoreTiming, ADenseScatterAddReadsNoInverseAndWritesTheWholeTable) {
  Fixture f;
  SparseScatterAdd add{f.table, f.bags, Combiner::Sum, kGrads, 0, 0, kRowGrads};
  add.dense = true;
  f.sc.enqueue({add});
  // 2 + meta (ids, offsets, 2 x 4 gradient words: 4 requests) 21 + max(front 3, SIMD 12 / 4)
  //   + output (10 x 4 words: 10 requests) 39 = 65
  EXPECT_EQ(f.sc.run(f.st, 0), 2 + 21 + 3 + 39);
  EXPECT_EQ(f.sc.stats().hbm_write_bytes, 160);
}

TEST(SparseCoreTiming, DedupScatterAddAndUpdatesInQueueOrder) {
  Fixture f;
  f.sc.enqueue({SparseDedup{f.bags, kUnique, kCount, kInverse}});
  f.sc.enqueue(
      {SparseScatterAdd{f.table, f.bags, Combiner::Sum, kGrads, kInverse, kCount, kRowGrads}});
  f.sc.enqueue({SparseUpdate{f.table, kUnique, kCount, kRowGrads, SparseOptimizer::Sgd, 0.1}});
  SparseUpdate ada{f.table, kUnique, kCount, kRowGrads, SparseOptimizer::Adagrad, 0.1};
  ada.state = kState;
  f.sc.enqueue({ada});
  // dedup: 2 + meta 15 + front 3 + (3 unique, 3 inverse, count: 3 requests) 18 = 38
  const int64_t dedup = 2 + 15 + 3 + 18;
  // scatter_add: 2 + meta (ids, offsets, inverse, count, 2 x 4 gradient words: 6 requests) 27
  //   + max(front 3, SIMD 12 / 4) + output (3 x 4 words: 3 requests) 18 = 50
  const int64_t scatter = 2 + 27 + 3 + 18;
  // update: 2 + meta (ids, count, 3 x 4 gradient words: 5 requests) 24, SGD: rows 3 read 18
  //   (SIMD 24 / 4 = 6) and 3 written 18; Adagrad: 6 rows each way 27 (SIMD 84 / 4 = 21).
  const int64_t sgd = 2 + 24 + 18 + 18, adagrad = 2 + 24 + 27 + 27;
  EXPECT_EQ(f.sc.run(f.st, 100), 100 + dedup + scatter + sgd + adagrad);
  EXPECT_EQ(f.sc.stats().row_reads, 3 + 6);
  EXPECT_EQ(f.sc.stats().row_writes, 3 + 6);
  EXPECT_EQ(f.sc.stats().descriptors, 4);
  // A second run starts when the unit is free, not earlier.
  f.sc.enqueue({SparseDedup{f.bags, kUnique, kCount, kInverse}});
  EXPECT_EQ(f.sc.run(f.st, 0), 100 + dedup + scatter + sgd + adagrad + dedup);
}

TEST(SparseCoreTiming, AWaitHoldsTheQueueUntilItsFlagIsSignalledAndTheTensorCoreFlagFollows) {
  Fixture f;
  f.sc.signal(1, 100);
  f.sc.enqueue({SparseWait{1, 1}});
  f.sc.enqueue({SparseGather{f.table, f.bags, Combiner::Sum, SparseDest::Vmem, 0}, 3});
  EXPECT_EQ(f.sc.run(f.st, 0), 100 + 44);
  EXPECT_EQ(f.sc.stats().wait_cycles, 98);  // decoded at 2, signalled at 100
  EXPECT_EQ(f.sc.own_flag(1), 0u);
  EXPECT_EQ(f.sc.flag_ready(3, 0, 1), 144);
  EXPECT_EQ(f.sc.last_completion(), 144);
  f.sc.retire(143, f.st.flags);
  EXPECT_EQ(f.st.flags[3], 0u);
  f.sc.retire(144, f.st.flags);
  EXPECT_EQ(f.st.flags[3], 1u);
  EXPECT_EQ(f.sc.stats().flags_signalled, 1);
}

TEST(SparseCoreTiming, AWaitOnAFlagAlreadySetCostsOnlyItsDecode) {
  Fixture f;
  f.sc.signal(0, 0);
  f.sc.signal(0, 1);
  f.sc.enqueue({SparseWait{0, 2}});
  EXPECT_EQ(f.sc.run(f.st, 10), 12);
  EXPECT_EQ(f.sc.stats().wait_cycles, 0);
}

// The timed tensor core waits on the flag a sparse-core descriptor owes it.
class SparseHandoff : public ::testing::TestWithParam<SparseDest> {};

TEST_P(SparseHandoff, TheTensorCoreWaitsForTheSparseCoresFlag) {
  const CoreSpec spec = sparse_spec();
  Core c(spec, assemble("wait 3, 1\nsmfsr s11, %cycle_lo\nhalt\n", spec));
  SparseCore& sc = c.machine().sparse();
  ArchState& st = c.host_state();
  const int t = add_table(sc, st, "emb", 0, 10, 4);
  const SparseBags b = write_bags(st, kIds, kOffsets, {{1, 2}, {3}});
  const SparseDest to = GetParam();
  const int64_t dst = to == SparseDest::Hbm ? kOut : 16;
  sc.enqueue({SparseGather{t, b, Combiner::Mean, to, dst}, 3});
  const int64_t done = sc.run(st, 0);
  EXPECT_EQ(done, to == SparseDest::Hbm ? 50 : 44);
  c.run();
  EXPECT_EQ(c.state().sreg(11), static_cast<uint32_t>(done + 1));  // the wait issued at `done`
  EXPECT_EQ(c.stall_cycles(StallCause::SyncWait), done);
  EXPECT_EQ(c.state().flags[3], 0u);
  const float want = (table_value(1, 0) + table_value(2, 0)) / 2.0f;
  EXPECT_EQ(to == SparseDest::Hbm ? st.hbm.read(dst) : st.vmem[dst], bits(want));
  const report::StatGroup g = c.stats();
  EXPECT_NE(g.to_json().dump().find("sparse_core"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Paths, SparseHandoff,
                         ::testing::Values(SparseDest::Hbm, SparseDest::Vmem));

}  // namespace
}  // namespace tessera::core::test
