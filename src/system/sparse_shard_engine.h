// The machinery the sharded lookup (system/sparse_shard_lookup.h) and the sharded backward
// (system/sparse_shard_tables.h) share: every processor's HBM and sparse core, the owners' local
// tables in that HBM, the buffers of one step, and the all-to-all exchange of HBM segments over
// the packet fabric inside a BSP superstep (docs/sparse-core.md, "Tables across chips").
//
// HBM of a processor: the local tables it owns (local_rows x dim each, in table order), each
// followed by its Adagrad accumulators when the tables have them; then the buffers of the current
// step, allocated from there on by alloc() and released by the next step's begin(true).
// A local row is written from the tables' initial value the first time a step touches it (HBM is
// paged lazily: host memory follows the rows touched); updates then change it in place.
// Every call (a lookup or a backward) runs on fresh sparse cores, with the owner tables
// registered in table order and their Adagrad step counts carried from the previous call, and on
// a fresh fabric: its times start at the call's `start` cycle.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"
#include "common/rank_group.h"
#include "common/thread_pool.h"
#include "core/sparse_core.h"
#include "core/spec.h"
#include "core/state.h"
#include "fabric/fabric.h"
#include "system/sparse_shard.h"
#include "system/system_spec.h"

namespace tessera::system {

namespace shard {

inline size_t at(int64_t i) {
  return static_cast<size_t>(i);
}

// Prefix sums of `count(i)` for i in [0, n): n + 1 entries.
template <typename Count>
std::vector<int64_t> firsts(int n, Count&& count) {
  std::vector<int64_t> f(at(n + 1), 0);
  for (int i = 0; i < n; ++i) f[at(i + 1)] = f[at(i)] + count(i);
  return f;
}

// Throws tessera::Error unless `v` has one entry per processor (P) and each of those one per
// table (T), naming `what`; then check(p, t) for each.
template <typename V, typename Check>
void check_per_table(const V& v, int P, int T, const char* what, Check&& check) {
  if (static_cast<int>(v.size()) != P)
    throw Error("sparse shard",
                fmt::format("{} for {} processors, the system has {}", what, v.size(), P));
  for (int p = 0; p < P; ++p) {
    if (static_cast<int>(v[at(p)].size()) != T)
      throw Error("sparse shard", fmt::format("processor {}: {} for {} tables, not {}", p, what,
                                              v[at(p)].size(), T));
    for (int t = 0; t < T; ++t) check(p, t);
  }
}

// One processor. Per table (index t) it holds, as owner: its local table and accumulators; as
// requester in the current step: its ids' owner and place in that owner's list, the lists (local
// rows per owner, owners in order) and the rows received back (the same order), the renumbered
// ids, the offsets and the results; as owner in the current step: the lists it received
// (requesters in order), their offsets (one bag per requester) and the rows it gathered for them.
struct Proc {
  explicit Proc(const core::CoreSpec& spec) : st(spec) {}
  core::ArchState st;
  std::unique_ptr<core::SparseCore> sc;  // of the current call
  int64_t next = 0;                      // the next free HBM word
  int64_t tables_end = 0;                // the first word after the local tables

  // Persistent, per table: HBM word of local row 0 and of its accumulators (-1: none), the
  // rows written so far, the Adagrad step count.
  std::vector<int64_t> base, state, local_rows;
  std::vector<std::vector<bool>> written;
  std::vector<int64_t> steps;
  std::vector<int> table;  // index in sc of the current call, -1: no rows here

  std::vector<std::vector<std::vector<uint32_t>>> lists;  // [table][owner]: local rows
  std::vector<std::vector<uint32_t>> slot_owner, slot_index;
  std::vector<std::vector<int64_t>> by_owner;  // [table][owner + 1]: the first id of each list
  std::vector<int64_t> out_ids, recv, ids, offsets, result;
  std::vector<std::vector<int64_t>> by_requester;  // [table][requester + 1]
  std::vector<int64_t> in_ids, in_offsets, out_rows;
  // The backward (system/sparse_shard_tables.h): as requester, the bags' gradients, the count of
  // its distinct ids and their partial sums; as owner, the rows received, the distinct rows (their
  // count and every received row's place among them) and their summed gradients.
  std::vector<int64_t> grads, count, partial, in_grads, unique, unique_count, inverse, summed;
  int64_t route_end = 0, gather_end = 0, combine_end = 0, scatter_end = 0, update_end = 0;

  int64_t alloc(int64_t words, int p);
  // Runs the queued descriptors from `now` once the queue (of `queue` descriptors) is full, or
  // when `flush` is set.
  void run_if(bool flush, int64_t& now, int64_t queue) {
    if (sc->queued() > 0 && (flush || sc->queued() >= queue)) now = sc->run(st, now);
  }
};

// A block of words moved by an all-to-all: from a word address in the source processor's HBM to
// one in the destination's.
struct Segment {
  int64_t from = 0, to = 0, words = 0;
};

// Payload bytes of one exchange, the most any one directed inter-chip link carries under the
// fabric's static routing, and the longest inter-chip path.
struct ExchangeBytes {
  uint64_t bytes = 0, busiest_link = 0;
  int max_hops = 0;
};

class Engine {
 public:
  // `accumulators`: every local table gets Adagrad accumulators beside it. Throws tessera::Error
  // when a processor's local tables do not fit its HBM.
  // `ranks`: the processes that simulate the fabric together (Fabric::set_ranks; nullptr: this
  // one alone); every rank computes every processor's values.
  Engine(const core::CoreSpec& core, const SystemSpec& system, const ShardMap& map,
         std::vector<ShardedTable> tables, TableValue value, bool accumulators, ThreadPool* pool,
         RankGroup* ranks = nullptr);

  // Starts a call (header comment); `new_step` releases the previous step's buffers.
  void begin(bool new_step);
  // Ends a call: keeps the Adagrad step counts and adds the sparse cores' statistics.
  void end();

  // body(processor, p) for every processor, on the host threads.
  void each(const std::function<void(Proc&, int)>& body);
  Proc& proc(int p) { return *m_procs[at(p)]; }
  const Proc& proc(int p) const { return *m_procs[at(p)]; }
  const std::vector<uint32_t>& list(int r, int o, int t) { return proc(r).lists[at(t)][at(o)]; }
  int64_t latest(int64_t Proc::*end) const;
  // Writes the rows the current step's lists touch on owner p that hold no value yet.
  void write_touched_rows(Proc& me, int p, int t);
  // The global row of owner p's local row.
  int64_t global_row(int p, int64_t local) const;

  // One all-to-all superstep's exchange: segment(src, dst, t) for every ordered pair of
  // processors and table. A processor's own segments are copied in its HBM (no transfer); every
  // other pair's segments, concatenated in table order, are one transfer, posted at the last
  // compute end + barrier and written into the destination's HBM on arrival. Returns the cycle
  // every processor resumes at (system.h, kBoth); adds to `x`.
  int64_t all_to_all(int64_t compute_end, ExchangeBytes& x,
                     const std::function<Segment(int, int, int)>& segment);
  // The packets of the current call's fabric (collective over the ranks).
  uint64_t packets();

  const core::CoreSpec& core() const { return m_core; }
  const ShardMap& map() const { return m_map; }
  const std::vector<ShardedTable>& tables() const { return m_tables; }
  const TableValue& value() const { return m_value; }
  int processors() const { return m_P; }
  int table_count() const { return m_T; }
  // Every processor's sparse-core statistics, summed over the calls so far.
  const core::SparseCoreStats& stats() const { return m_stats; }

 private:
  fabric::Endpoint endpoint(int p) const;
  int processor(const fabric::Endpoint& e) const;
  fabric::Picos ps(int64_t cycles) const;
  int64_t cycle_at(fabric::Picos t) const;

  core::CoreSpec m_core;
  SystemSpec m_system;
  ShardMap m_map;
  std::vector<ShardedTable> m_tables;
  TableValue m_value;
  ThreadPool m_serial{1};
  ThreadPool* m_pool;
  RankGroup* m_ranks;
  std::unique_ptr<fabric::Fabric> m_fabric;
  int m_P, m_T;
  std::vector<std::unique_ptr<Proc>> m_procs;
  core::SparseCoreStats m_stats;
};

}  // namespace shard
}  // namespace tessera::system
