// Embedding tables spread over the processors of a system that persist across training steps
// (docs/sparse-core.md, "Training over chips"): the rows live in their owners' HBM
// (system/sparse_shard.h placement), with Adagrad accumulators beside them for Adagrad; a step
// looks them up (system/sparse_shard_lookup.h, ids de-duplicated before the exchange) and then
// sends the row gradients back to the owners, who add them and update the rows.
//
// Backward supersteps (after a lookup, for its bags; times in cycles, as the lookup's):
//   1. scatter   every requester runs one scatter_add per table: the gradients of its bags
//                (bags x dim; combiner none: one row per id) to one partial-sum row per distinct
//                id it looked up, ids positions in order; the rows land in its lists' order
//                (owners in processor order, each owner's rows ascending), the lookup's renumbered
//                ids serving as the inverse.
//      grads out one transfer per (requester, owner) pair on different processors: the partial
//                rows of every table, concatenated in table order (the owner holds their ids from
//                the lookup's ids out).
//   2. update    every owner, per table it received rows of, runs dedup over the lists it
//                received (requesters in processor order), scatter_add (combiner none) of the
//                received rows onto its distinct rows, and the optimizer's update of those rows
//                (SGD, or Adagrad with the accumulators; numerics/sparse_optimizer.h). A table
//                with local rows but no received row only counts its Adagrad step.
// So the gradient of a row is ((0 + s_a) + s_b) + ... over the requesters a < b < ... that looked
// it up, each s the requester's own sum over its id positions in order: bit for bit one sparse
// core that scatter-adds each requester's bags into partial sums, then adds the partial sums in
// requester order and updates the whole table. With one processor that is the plain dedup,
// scatter_add and update of all the bags.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/rank_group.h"
#include "common/thread_pool.h"
#include "core/sparse_core.h"
#include "core/spec.h"
#include "system/sparse_shard_lookup.h"
#include "system/system_spec.h"

namespace tessera::system {

namespace shard {
class Engine;
}

struct ShardedOptimizer {
  core::SparseOptimizer kind = core::SparseOptimizer::Sgd;
  double lr = 0.01, lr_decay = 0;  // lr_decay: Adagrad only
  float eps = 1e-10f;              // Adagrad only
};

struct ShardedBackwardSpan {
  int64_t scatter = 0, grads = 0, update = 0;  // the phases' end cycles
};

struct ShardedBackwardResult {
  int64_t cycles = 0;  // the last update's end
  ShardedBackwardSpan span;
  // Exchange payload bytes (4 per word) between processors, and the most any one directed
  // inter-chip link carries.
  uint64_t grad_bytes = 0, busiest_link_grad_bytes = 0;
  uint64_t packets = 0;
  int64_t rows_updated = 0;  // distinct rows updated, over every owner and table
};

struct DenseAllReduceResult {
  int64_t cycles = 0;  // the all-gather's end
  // Exchange payload bytes between processors, and the most any one directed inter-chip link
  // carries, over both supersteps.
  uint64_t bytes = 0, busiest_link_bytes = 0;
  uint64_t packets = 0;
};

class ShardedTables {
 public:
  // The tables start at `init` (called from several host threads: it must be pure). `ranks`:
  // the processes simulating the fabric together (every rank computes every value). Throws
  // tessera::Error when the system and placement disagree or a processor's local tables (and
  // accumulators) do not fit its HBM.
  ShardedTables(const core::CoreSpec& core, const SystemSpec& system, const ShardMap& map,
                std::vector<ShardedTable> tables, TableValue init, ShardedOptimizer optimizer,
                ThreadPool* pool = nullptr, RankGroup* ranks = nullptr);
  ~ShardedTables();
  ShardedTables(const ShardedTables&) = delete;
  ShardedTables& operator=(const ShardedTables&) = delete;

  // A step's forward: every processor's bags looked up from cycle `start` (ids de-duplicated per
  // requester before the exchange). Throws as sharded_lookup.
  ShardedLookupResult lookup(const std::vector<std::vector<LookupBags>>& bags,
                             numerics::Combiner combiner, int64_t start = 0);
  // The step's backward from cycle `start`: grads[p][t] the gradients of processor p's results
  // of table t in the last lookup (its shape). Throws tessera::Error before a lookup, for
  // gradients of the wrong shape, and SimFault / fabric errors from the units.
  ShardedBackwardResult backward(const std::vector<std::vector<std::vector<float>>>& grads,
                                 int64_t start);

  // The dense gradients of a data-parallel model summed over the processors, on the same
  // processors and fabric from cycle `start` (system/sparse_shard_allreduce.cpp): every v[p] (one
  // per processor, equal lengths W) becomes ((v_0 + v_1) + v_2) + ... element by element. Two
  // all-to-all supersteps: reduce-scatter (processor c receives chunk c of every processor's
  // vector, the chunks W / P words, the first W % P one word more), the owner adding the
  // chunks in processor order (on the host: the adds are not timed), then all-gather. Keeps the
  // last lookup's state (a backward may follow). Throws tessera::Error for vectors of different
  // lengths or the wrong count.
  DenseAllReduceResult all_reduce(std::vector<std::vector<float>>& v, int64_t start);

  // A row's current value, and its Adagrad accumulators (zeros without Adagrad or before its
  // first update).
  std::vector<float> row(int table, int64_t r) const;
  std::vector<float> accumulators(int table, int64_t r) const;
  // Adagrad updates table `table` has had.
  int64_t adagrad_step(int table) const;
  // Every processor's sparse-core statistics, summed over the calls so far.
  const core::SparseCoreStats& sparse_stats() const;
  // Host memory: HBM pages allocated, over every processor.
  int64_t hbm_pages() const;

 private:
  std::vector<float> read(int table, int64_t r, bool accumulators) const;

  std::unique_ptr<shard::Engine> m_engine;
  ShardedOptimizer m_opt;
  std::vector<std::vector<LookupBags>> m_bags;  // of the last lookup
  numerics::Combiner m_combiner = numerics::Combiner::Sum;
  bool m_looked_up = false;
};

}  // namespace tessera::system
