// The backward hand-off: the tensor core's dma.vh.sc writes bag gradients to HBM and increments one
// of the sparse core's own flags when the data is there; the sparse core's wait descriptor holds
// its scatter-add until then. Cycles counted by hand on sparse_spec() (DMA latency 20, HBM 16 B
// per cycle; the sparse core's HBM stream of R requests takes 9 + 3 R cycles).
#include <gtest/gtest.h>

#include "core/core.h"
#include "core/functional.h"
#include "sparse_test_util.h"

namespace tessera::core::test {
namespace {

constexpr int64_t kIds = 1000, kOffsets = 1100, kGrads = 2000, kUnique = 3000, kCount = 3100,
                  kInverse = 3200, kRowGrads = 4000;

// Two bags of dim-4 gradients (8 words) in vector memory words 0..7, written to HBM kGrads by
// dma.vh.sc with the sparse core's flag 2.
constexpr const char* kProgram = R"(
  sli s1, 2000 ;; sli s2, 0
  sli s3, 8
  dma.vh.sc s1, s2, s3, 2
  halt
)";

std::vector<float> bag_gradients() {
  return {1.0f, 2.0f, 3.0f, 4.0f, 0.5f, 0.25f, -1.0f, 8.0f};
}

// Queues dedup, wait on flag 2, scatter-add of the bags {1, 3}, {3} (sum) on `sc`.
void queue_backward(SparseCore& sc, ArchState& st, int table) {
  const SparseBags b = write_bags(st, kIds, kOffsets, {{1, 3}, {3}});
  sc.enqueue({SparseDedup{b, kUnique, kCount, kInverse}});
  sc.enqueue({SparseWait{2, 1}});
  sc.enqueue({SparseScatterAdd{table, b, Combiner::Sum, kGrads, kInverse, kCount, kRowGrads}});
}

void write_vmem_gradients(ArchState& st) {
  const std::vector<float> g = bag_gradients();
  for (size_t i = 0; i < g.size(); ++i) st.vmem[i] = bits(g[i]);
}

// Row gradients of the distinct ids {1, 3}: id 1 gets bag 0's, id 3 bag 0's + bag 1's.
void expect_row_gradients(const ArchState& st) {
  const std::vector<float> g = bag_gradients();
  EXPECT_EQ(read_words(st, kCount, 1)[0], 2u);
  const std::vector<float> rows = read_floats(st, kRowGrads, 8);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(rows[static_cast<size_t>(i)], g[static_cast<size_t>(i)]);
    EXPECT_EQ(rows[static_cast<size_t>(4 + i)],
              0.0f + g[static_cast<size_t>(i)] + g[static_cast<size_t>(4 + i)]);
  }
}

// The dedup ahead of the wait: decode 2, meta (3 ids + 3 offsets: 1 request each) 15, front 3,
// output (2 unique + 3 inverse + 1 count words: 3 requests) 18; the wait is decoded 2 cycles later.
constexpr int64_t kWaitDecoded = 2 + 15 + 3 + 18 + 2;

// The scatter-add's cycles: the backward queue on a unit whose flag was signalled at cycle 0.
int64_t scatter_add_cycles(const CoreSpec& spec) {
  SparseCore sc(spec);
  ArchState st(spec);
  const int t = add_table(sc, st, "emb", 0, 10, 4);
  write_floats(st, kGrads, bag_gradients());
  sc.signal(2, 0);
  queue_backward(sc, st, t);
  return sc.run(st, 0) - kWaitDecoded;
}

// The timed tensor core with the table registered and the gradients in vector memory, after
// running `program`.
struct TimedRun {
  CoreSpec spec = sparse_spec();
  Core c;
  int table;
  explicit TimedRun(const char* program)
      : c(spec, assemble(program, spec)), table(add_table(sc(), st(), "emb", 0, 10, 4)) {
    write_vmem_gradients(st());
    c.run();
  }
  SparseCore& sc() { return c.machine().sparse(); }
  ArchState& st() { return c.host_state(); }
};

TEST(SparseBackwardHandoff, TheTimedDmaSignalsTheSparseCoresFlagAtItsCompletion) {
  TimedRun r(kProgram);
  // Issued at cycle 2 (after the two sli bundles): + latency 20 + 32 bytes at 16 per cycle = 24;
  // the run ends with its last DMA.
  EXPECT_EQ(r.c.cycles(), 24);
  EXPECT_EQ(read_floats(r.st(), kGrads, 8), bag_gradients());
  for (uint32_t f : r.st().flags) EXPECT_EQ(f, 0u);  // no tensor-core flag
  EXPECT_EQ(r.sc().own_flag(2), 0u);                 // owed at 24, not yet taken by the unit
  queue_backward(r.sc(), r.st(), r.table);
  const int64_t done = r.sc().run(r.st(), 0);  // the wait, decoded at 40, finds the increment
  EXPECT_EQ(r.sc().stats().wait_cycles, 0);
  EXPECT_EQ(done, kWaitDecoded + scatter_add_cycles(r.spec));
  EXPECT_EQ(r.sc().own_flag(2), 0u);  // the wait took its increment
  expect_row_gradients(r.st());
}

TEST(SparseBackwardHandoff, TheSparseCoreWaitsForALateDma) {
  // A 1024-word DMA ahead holds the HBM path: the dma.vh.sc completes after it.
  TimedRun r(R"(
  sli s1, 2000 ;; sli s2, 0
  sli s3, 8 ;; sli s4, 6000
  sli s5, 1024
  dma.vh s4, s2, s5, 0
  dma.vh.sc s1, s2, s3, 2
  wait 0, 1
  halt
)");
  const int64_t dma_done = r.c.cycles();
  EXPECT_GT(dma_done, kWaitDecoded);
  queue_backward(r.sc(), r.st(), r.table);
  const int64_t done = r.sc().run(r.st(), 0);
  EXPECT_EQ(r.sc().stats().wait_cycles, dma_done - kWaitDecoded);
  EXPECT_EQ(done, dma_done + scatter_add_cycles(r.spec));
  expect_row_gradients(r.st());
}

TEST(SparseBackwardHandoff, TheFunctionalDmaSignalsAtOnce) {
  const CoreSpec spec = sparse_spec();
  FunctionalCore f(spec, assemble(kProgram, spec));
  SparseCore& sc = f.machine().sparse();
  ArchState& st = f.state();
  const int t = add_table(sc, st, "emb", 0, 10, 4);
  write_vmem_gradients(st);
  f.run();
  for (uint32_t fl : st.flags) EXPECT_EQ(fl, 0u);
  queue_backward(sc, st, t);
  sc.run(st, 0);
  EXPECT_EQ(sc.stats().wait_cycles, 0);
  expect_row_gradients(st);
}

TEST(SparseBackwardHandoff, ASparseFlagOutsideTheConfigurationIsADecodeError) {
  const CoreSpec spec = sparse_spec();  // 4 sparse-core flags
  EXPECT_THROW(
      {
        try {
          Core c(spec, assemble("sli s1, 0\ndma.vh.sc s1, s1, s1, 4\nhalt\n", spec));
          c.run();
        } catch (const std::exception& e) {
          EXPECT_NE(std::string(e.what()).find("sparse-core flag 4 does not exist"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      std::exception);
}

}  // namespace
}  // namespace tessera::core::test
