// Embedding-bag lookups of tables spread over the processors of a system (system/sparse_shard.h
// placement), each processor's bags served by the sparse cores that own their rows, the remote
// lookups an all-to-all over the packet fabric (fabric/fabric.h) inside BSP supersteps
// (docs/sparse-core.md, "Tables across chips"). Every processor p has its own bags (per table:
// offsets and ids, as SparseGather reads them) and receives its own pooled results.
//
// Supersteps (one processor per sparse core; times in cycles of core.clock_hz, the fabric in ps):
//   1. route    each processor splits its ids by owner (placement) into per-owner lists of local
//               row numbers, per table in id-position order, written to its HBM; timed as a pass
//               over its ids: decode (descriptor_cycles) + a stream reading the ids and offsets
//               + ceil(n / ids_per_cycle) + a stream writing the lists (core/sparse_core.h's
//               HBM stream). De-duplicated (the persistent tables of system/sparse_shard_tables.h):
//               each list holds the distinct local rows of that owner in ascending order, so each
//               requester sends each id once; the pass also writes every id position's place in
//               the lists (the inverse: the dedup descriptor's pass with the ids keyed by owner
//               first, its unique ids the lists concatenated).
//      ids out  one transfer per (requester, owner) pair on different processors: the lists of
//               every table, concatenated in table order; a processor's own lists are copied
//               into place in its HBM outside the timing (as its own rows below).
//   2. gather   every owner runs one SparseGather (combiner none) per table over the lists it
//               received, requesters in processor order: one row per requested id, in order.
//      rows out one transfer per (owner, requester) pair: the rows of every table, concatenated.
//   3. combine  every requester lays the rows it received out per table, owners in processor order
//               (its own rows copied into place outside the timing), and runs one SparseGather
//               per table with the bags' combiner over them, ids renumbered to the rows' places:
//               the rows of a bag are combined in id order, so the results are bit for bit those
//               of one sparse core gathering from the whole table.
// Each exchange follows the system's default barrier placement (system/system.h, kBoth): the
// transfers are posted at (the last processor's compute end + system.barrier_latency) and every
// processor resumes at max(that, the last arrival) + system.barrier_latency. Transfers between
// the cores of one chip take the fabric's on-chip path. Arrivals are written into the receiver's
// HBM (the interconnect joins the chips' HBM).
// The table rows are written into the owners' HBM only for the rows some bag touches (HBM is
// paged lazily), from `value` (called from several host threads at once: it must be pure).
// Host threads: the processors' phases run on `pool` (each touches only its own processor) and
// the fabric's drains on its partitions (Fabric::set_workers); results, times and statistics do
// not depend on the thread count.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/thread_pool.h"
#include "core/spec.h"
#include "numerics/embedding_bag.h"
#include "system/sparse_shard.h"
#include "system/system_spec.h"

namespace tessera::system {

struct LookupBags {
  std::vector<uint32_t> offsets;  // bags + 1, offsets[0] = 0, non-decreasing
  std::vector<uint32_t> ids;      // offsets.back() ids
};

struct ShardedLookupSpan {
  int64_t route = 0, ids = 0, gather = 0, rows = 0, combine = 0;  // the phases' end cycles
};

struct ShardedLookupResult {
  // pooled[p][t]: processor p's results of table t (bags x dim; combiner none: one row per id).
  std::vector<std::vector<std::vector<float>>> pooled;
  int64_t cycles = 0;  // the last combine's end
  ShardedLookupSpan span;
  // Exchange payload bytes (4 per word) between processors, and the most any one directed
  // inter-chip link carries under the fabric's static routing, per exchange.
  uint64_t id_bytes = 0, row_bytes = 0;
  uint64_t busiest_link_id_bytes = 0, busiest_link_row_bytes = 0;
  int max_hops = 0;  // the longest inter-chip path any transfer takes
  uint64_t packets = 0;
  // HBM row traffic (whole requests): the most any owner reads in the gathers, and the most any
  // requester reads back of rows other processors sent it.
  int64_t owner_row_bytes = 0, remote_row_bytes = 0;
};

// Throws tessera::Error for bags of the wrong count (one per processor, one per table each), bad
// offsets, an id outside its table (naming processor, table, id and position), tables or buffers
// that do not fit a processor's HBM, and SimFault / fabric errors from the units.
ShardedLookupResult sharded_lookup(const core::CoreSpec& core, const SystemSpec& system,
                                   const ShardMap& map, const std::vector<ShardedTable>& tables,
                                   const std::vector<std::vector<LookupBags>>& bags,
                                   numerics::Combiner combiner, const TableValue& value,
                                   ThreadPool* pool = nullptr);

namespace shard {
class Engine;
// The lookup on an engine's tables (system/sparse_shard_engine.h) from cycle `start`, as one call
// of it; `dedup`: lists of distinct ids (route above). Throws as sharded_lookup.
ShardedLookupResult run_lookup(Engine& engine, const std::vector<std::vector<LookupBags>>& bags,
                               numerics::Combiner combiner, bool dedup, int64_t start);
}  // namespace shard

}  // namespace tessera::system
