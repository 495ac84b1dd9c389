#include "system/sparse_shard_lookup.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "common/error.h"
#include "common/int_math.h"
#include "core/sparse_core.h"
#include "core/state.h"
#include "fabric/fabric.h"

namespace tessera::system {

namespace {

size_t at(int64_t i) {
  return static_cast<size_t>(i);
}

// One processor: its tensor-core state (HBM) and sparse core, and its part of every superstep.
// Per table (index t) it holds, as requester: its ids' owner and place in that owner's list, the
// lists (local rows per owner, owners in order) and the rows received back (the same order), the
// renumbered ids, the offsets and the results; as owner: the lists it received (requesters in
// order), their offsets (one bag per requester) and the rows it gathered for them.
struct Proc {
  explicit Proc(const core::CoreSpec& spec) : st(spec), sc(spec) {}
  core::ArchState st;
  core::SparseCore sc;
  int64_t next = 0;  // the next free HBM word

  std::vector<std::vector<std::vector<uint32_t>>> lists;  // [table][owner]: local rows
  std::vector<std::vector<uint32_t>> slot_owner, slot_index;
  std::vector<std::vector<int64_t>> by_owner;  // [table][owner + 1]: the first id of each list
  std::vector<int64_t> out_ids, recv, ids, offsets, result;
  std::vector<int> table;                          // index in sc, -1: no rows here
  std::vector<std::vector<int64_t>> by_requester;  // [table][requester + 1]
  std::vector<int64_t> in_ids, in_offsets, out_rows;
  int64_t route_end = 0, gather_end = 0, combine_end = 0;

  int64_t alloc(int64_t words, int p) {
    const int64_t first = next;
    next += std::max<int64_t>(words, 1);
    if (next > st.hbm.size())
      throw Error("sparse shard", fmt::format("processor {}: its tables and lookup buffers need "
                                              "more than the {} words of its HBM",
                                              p, st.hbm.size()));
    return first;
  }
  // Runs the queued descriptors from `now` once the queue (of `queue` descriptors) is full, or
  // when `flush` is set.
  void run_if(bool flush, int64_t& now, int64_t queue) {
    if (sc.queued() > 0 && (flush || sc.queued() >= queue)) now = sc.run(st, now);
  }
};

void check_bags(const LookupBags& b, const ShardedTable& t, int p, int ti) {
  const std::string who = fmt::format("processor {} table '{}' (#{})", p, t.name, ti);
  if (b.offsets.empty() || b.offsets.front() != 0)
    throw Error("sparse shard", who + ": offsets must start with 0");
  for (size_t i = 1; i < b.offsets.size(); ++i)
    if (b.offsets[i] < b.offsets[i - 1])
      throw Error("sparse shard", fmt::format("{}: offsets[{}] = {} < offsets[{}] = {}", who, i,
                                              b.offsets[i], i - 1, b.offsets[i - 1]));
  if (b.ids.size() != b.offsets.back())
    throw Error("sparse shard",
                fmt::format("{}: {} ids, offsets end at {}", who, b.ids.size(), b.offsets.back()));
  for (size_t i = 0; i < b.ids.size(); ++i)
    if (b.ids[i] >= t.rows)
      throw Error("sparse shard",
                  fmt::format("{}: id {} outside the table ({} rows) at position {}", who, b.ids[i],
                              t.rows, i));
}

// Prefix sums of `count(i)` for i in [0, n): n + 1 entries.
template <typename Count>
std::vector<int64_t> firsts(int n, Count&& count) {
  std::vector<int64_t> f(at(n + 1), 0);
  for (int i = 0; i < n; ++i) f[at(i + 1)] = f[at(i)] + count(i);
  return f;
}

// A block of words moved by an all-to-all: from a word address in the source processor's HBM to
// one in the destination's.
struct Segment {
  int64_t from = 0, to = 0, words = 0;
};

class Lookup {
 public:
  Lookup(const core::CoreSpec& core, const SystemSpec& system, const ShardMap& map,
         const std::vector<ShardedTable>& tables, const std::vector<std::vector<LookupBags>>& bags,
         numerics::Combiner combiner, const TableValue& value, ThreadPool* pool)
      : m_core(core),
        m_system(system),
        m_map(map),
        m_tables(tables),
        m_bags(bags),
        m_combiner(combiner),
        m_value(value),
        m_pool(pool != nullptr ? pool : &m_serial),
        m_fabric(system, 0),
        m_P(map.processors()),
        m_T(static_cast<int>(tables.size())) {
    m_fabric.set_workers(pool);
    m_procs.resize(at(m_P));
    m_pool->run(m_P, [&](int p) { m_procs[at(p)] = std::make_unique<Proc>(core); });
  }

  ShardedLookupResult run() {
    each([&](Proc& me, int p) { route(me, p); });
    m_res.span.route = latest(&Proc::route_end);
    each([&](Proc& me, int p) { prepare(me, p); });
    m_res.span.ids = all_to_all(m_res.span.route, m_res.id_bytes, m_res.busiest_link_id_bytes,
                                [&](int r, int o, int t) {
                                  const Proc &req = proc(r), &own = proc(o);
                                  return Segment{req.out_ids[at(t)] + req.by_owner[at(t)][at(o)],
                                                 own.in_ids[at(t)] + own.by_requester[at(t)][at(r)],
                                                 static_cast<int64_t>(list(r, o, t).size())};
                                });
    each([&](Proc& me, int) { gather(me); });
    m_res.span.gather = latest(&Proc::gather_end);
    m_res.span.rows = all_to_all(
        m_res.span.gather, m_res.row_bytes, m_res.busiest_link_row_bytes, [&](int o, int r, int t) {
          const Proc &own = proc(o), &req = proc(r);
          const int64_t dim = m_tables[at(t)].dim;
          return Segment{own.out_rows[at(t)] + own.by_requester[at(t)][at(r)] * dim,
                         req.recv[at(t)] + req.by_owner[at(t)][at(o)] * dim,
                         static_cast<int64_t>(list(r, o, t).size()) * dim};
        });
    each([&](Proc& me, int p) { combine(me, p); });
    m_res.span.combine = m_res.cycles = latest(&Proc::combine_end);
    m_res.packets = m_fabric.stats().packets;
    results();
    return std::move(m_res);
  }

 private:
  // body(processor, p) for every processor, on the host threads.
  void each(const std::function<void(Proc&, int)>& body) {
    m_pool->run(m_P, [&](int p) { body(proc(p), p); });
  }
  Proc& proc(int p) { return *m_procs[at(p)]; }
  const std::vector<uint32_t>& list(int r, int o, int t) { return proc(r).lists[at(t)][at(o)]; }
  const LookupBags& bags_of(int p, int t) const { return m_bags[at(p)][at(t)]; }
  int64_t latest(int64_t Proc::*end) {
    int64_t m = 0;
    for (const auto& q : m_procs) m = std::max(m, (*q).*end);
    return m;
  }
  fabric::Endpoint endpoint(int p) const {
    return {p / m_system.cores_per_chip, p % m_system.cores_per_chip};
  }
  int processor(const fabric::Endpoint& e) const {
    return e.chip * m_system.cores_per_chip + e.core;
  }
  fabric::Picos ps(int64_t cycles) const {
    return std::llround(static_cast<double>(cycles) * 1e12 / m_core.clock_hz);
  }
  int64_t cycle_at(fabric::Picos t) const {  // the first cycle at or after t (0.5 ps tolerance)
    return static_cast<int64_t>(std::ceil((static_cast<double>(t) - 0.5) * m_core.clock_hz / 1e12));
  }

  // 1. route: this processor's ids split by owner, the lists written to its HBM.
  void route(Proc& me, int p) {
    const core::SparseCoreSpec& u = m_core.sparse;
    me.lists.assign(at(m_T), std::vector<std::vector<uint32_t>>(at(m_P)));
    me.slot_owner.resize(at(m_T));
    me.slot_index.resize(at(m_T));
    me.by_owner.resize(at(m_T));
    me.out_ids.resize(at(m_T));
    int64_t in_requests = 0, out_requests = 0, n = 0;
    for (int t = 0; t < m_T; ++t) {
      const LookupBags& b = bags_of(p, t);
      std::vector<std::vector<uint32_t>>& to = me.lists[at(t)];
      for (uint32_t id : b.ids) {
        const int o = m_map.owner(t, id);
        me.slot_owner[at(t)].push_back(static_cast<uint32_t>(o));
        me.slot_index[at(t)].push_back(static_cast<uint32_t>(to[at(o)].size()));
        to[at(o)].push_back(static_cast<uint32_t>(m_map.local_row(id)));
      }
      me.by_owner[at(t)] =
          firsts(m_P, [&](int o) { return static_cast<int64_t>(to[at(o)].size()); });
      const auto ids = static_cast<int64_t>(b.ids.size());
      me.out_ids[at(t)] = me.alloc(ids, p);
      for (int o = 0; o < m_P; ++o) {
        me.st.hbm.write_block(me.out_ids[at(t)] + me.by_owner[at(t)][at(o)], to[at(o)].data(),
                              static_cast<int64_t>(to[at(o)].size()));
        out_requests += me.sc.requests_of(4 * static_cast<int64_t>(to[at(o)].size()));
      }
      n += ids;
      in_requests += me.sc.requests_of(4 * ids) +
                     me.sc.requests_of(4 * static_cast<int64_t>(b.offsets.size()));
    }
    me.route_end = u.descriptor_cycles + me.sc.hbm_stream(in_requests) +
                   ceil_div(n, u.ids_per_cycle) + me.sc.hbm_stream(out_requests);
  }

  // Between route and the ids' exchange: the owner's tables with the rows some list touches, and
  // every buffer of the later supersteps.
  void prepare(Proc& me, int p) {
    me.table.assign(at(m_T), -1);
    for (auto* v :
         {&me.in_ids, &me.in_offsets, &me.out_rows, &me.recv, &me.ids, &me.offsets, &me.result})
      v->resize(at(m_T));
    me.by_requester.resize(at(m_T));
    for (int t = 0; t < m_T; ++t) {
      const ShardedTable& tab = m_tables[at(t)];
      const int64_t rows = m_map.local_rows(t, tab.rows, p);
      if (rows > 0) {
        const int64_t base = me.alloc(rows * tab.dim, p);
        me.table[at(t)] = me.sc.add_table({tab.name, base, rows, tab.dim}, me.st.hbm.size());
        write_touched_rows(me, p, t, base);
      }
      std::vector<int64_t>& from = me.by_requester[at(t)];
      from = firsts(m_P, [&](int r) { return static_cast<int64_t>(list(r, p, t).size()); });
      me.in_ids[at(t)] = me.alloc(from.back(), p);
      me.in_offsets[at(t)] = me.alloc(m_P + 1, p);
      me.out_rows[at(t)] = me.alloc(from.back() * tab.dim, p);
      const std::vector<uint32_t> offsets(from.begin(), from.end());
      me.st.hbm.write_block(me.in_offsets[at(t)], offsets.data(), m_P + 1);
      const LookupBags& b = bags_of(p, t);
      const auto n = static_cast<int64_t>(b.ids.size());
      const auto bags = static_cast<int64_t>(b.offsets.size()) - 1;
      me.recv[at(t)] = me.alloc(n * tab.dim, p);
      me.ids[at(t)] = me.alloc(n, p);
      me.offsets[at(t)] = me.alloc(bags + 1, p);
      me.result[at(t)] = me.alloc((m_combiner == numerics::Combiner::None ? n : bags) * tab.dim, p);
    }
  }

  void write_touched_rows(Proc& me, int p, int t, int64_t base) {
    const int64_t dim = m_tables[at(t)].dim;
    std::vector<uint32_t> touched;
    for (int r = 0; r < m_P; ++r)
      touched.insert(touched.end(), list(r, p, t).begin(), list(r, p, t).end());
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    std::vector<uint32_t> row(at(dim));
    for (uint32_t local : touched) {
      const int64_t g =
          m_map.placement() == ShardPlacement::kMod ? int64_t{local} * m_P + p : int64_t{local};
      for (int64_t c = 0; c < dim; ++c) row[at(c)] = std::bit_cast<uint32_t>(m_value(t, g, c));
      me.st.hbm.write_block(base + local * dim, row.data(), dim);
    }
  }

  // 2. gather: the rows of every list this owner received, requesters in order.
  void gather(Proc& me) {
    int64_t now = m_res.span.ids;
    for (int t = 0; t < m_T; ++t) {
      if (me.by_requester[at(t)].back() == 0) continue;
      me.sc.enqueue({core::SparseGather{me.table[at(t)],
                                        {me.in_ids[at(t)], me.in_offsets[at(t)], m_P},
                                        numerics::Combiner::None,
                                        core::SparseDest::Hbm,
                                        me.out_rows[at(t)]}});
      me.run_if(false, now, m_core.sparse.queue);
    }
    me.run_if(true, now, m_core.sparse.queue);
    me.gather_end = now;
  }

  // 3. combine: this requester's bags over the rows it received, ids renumbered to their places.
  void combine(Proc& me, int p) {
    int64_t now = m_res.span.rows;
    for (int t = 0; t < m_T; ++t) {
      const ShardedTable& tab = m_tables[at(t)];
      const LookupBags& b = bags_of(p, t);
      std::vector<uint32_t> ids(b.ids.size());
      for (size_t i = 0; i < ids.size(); ++i)
        ids[i] = static_cast<uint32_t>(me.by_owner[at(t)][me.slot_owner[at(t)][i]] +
                                       me.slot_index[at(t)][i]);
      const auto n = static_cast<int64_t>(ids.size());
      const auto bags = static_cast<int64_t>(b.offsets.size()) - 1;
      me.st.hbm.write_block(me.ids[at(t)], ids.data(), n);
      me.st.hbm.write_block(me.offsets[at(t)], b.offsets.data(), bags + 1);
      const int received = me.sc.add_table(
          {tab.name + ".received", me.recv[at(t)], std::max<int64_t>(n, 1), tab.dim},
          me.st.hbm.size());
      me.sc.enqueue({core::SparseGather{received,
                                        {me.ids[at(t)], me.offsets[at(t)], bags},
                                        m_combiner,
                                        core::SparseDest::Hbm,
                                        me.result[at(t)]}});
      me.run_if(false, now, m_core.sparse.queue);
    }
    me.run_if(true, now, m_core.sparse.queue);
    me.combine_end = now;
  }

  // One all-to-all superstep's exchange: segment(src, dst, t) for every ordered pair of
  // processors and table. A processor's own segments are copied in its HBM (no transfer); every
  // other pair's segments, concatenated in table order, are one transfer, posted at the last
  // compute end + barrier and written into the destination's HBM on arrival. Returns the cycle
  // every processor resumes at (system.h, kBoth); adds the payload bytes, the busiest directed
  // link's bytes (static routing) and the longest path.
  template <typename SegmentOf>
  int64_t all_to_all(int64_t compute_end, uint64_t& bytes, uint64_t& busiest, SegmentOf&& segment) {
    const fabric::Picos barrier = fabric::ns_to_ps(m_system.barrier_latency_ns);
    const fabric::Picos post = ps(compute_end) + barrier;
    const fabric::Routing& routing = m_fabric.routing();
    std::vector<uint64_t> load(routing.channels().size(), 0);
    for (int s = 0; s < m_P; ++s)
      for (int d = 0; d < m_P; ++d) {
        fabric::Transfer tr;
        for (int t = 0; t < m_T; ++t) {
          const Segment g = segment(s, d, t);
          const size_t w = tr.words.size();
          tr.words.resize(w + at(g.words));
          proc(s).st.hbm.read_block(g.from, tr.words.data() + w, g.words);
          if (s == d) proc(d).st.hbm.write_block(g.to, tr.words.data() + w, g.words);
        }
        if (s == d || tr.words.empty()) continue;
        tr.src = endpoint(s);
        tr.dst = endpoint(d);
        tr.id = static_cast<uint64_t>(d);
        const uint64_t b = 4 * tr.words.size();
        bytes += b;
        if (tr.src.chip != tr.dst.chip) {
          const std::vector<int> path = routing.path(tr.src.chip, tr.dst.chip);
          m_res.max_hops = std::max(m_res.max_hops, static_cast<int>(path.size()) - 1);
          for (size_t i = 1; i < path.size(); ++i)
            load[at(routing.channel_between(path[i - 1], path[i]))] += b;
        }
        m_fabric.post(post, std::move(tr));
      }
    if (!load.empty()) busiest += *std::max_element(load.begin(), load.end());
    fabric::Picos last = post;
    for (const fabric::Arrival& a : m_fabric.drain()) {
      last = std::max(last, a.time);
      const int s = processor(a.transfer.src), d = processor(a.transfer.dst);
      size_t w = 0;
      for (int t = 0; t < m_T; ++t) {
        const Segment g = segment(s, d, t);
        proc(d).st.hbm.write_block(g.to, a.transfer.words.data() + w, g.words);
        w += at(g.words);
      }
    }
    return cycle_at(last + barrier);
  }

  // The pooled results and the HBM row traffic.
  void results() {
    const core::SparseCoreSpec& u = m_core.sparse;
    m_res.pooled.resize(at(m_P));
    for (int p = 0; p < m_P; ++p) {
      Proc& me = proc(p);
      int64_t owner = 0, remote = 0;
      for (int t = 0; t < m_T; ++t) {
        const ShardedTable& tab = m_tables[at(t)];
        const int64_t row_bytes = me.sc.requests_of(4 * tab.dim) * u.hbm_request_bytes;
        owner += me.by_requester[at(t)].back() * row_bytes;
        remote +=
            (me.by_owner[at(t)].back() - static_cast<int64_t>(list(p, p, t).size())) * row_bytes;
        const LookupBags& b = bags_of(p, t);
        const int64_t rows = m_combiner == numerics::Combiner::None
                                 ? static_cast<int64_t>(b.ids.size())
                                 : static_cast<int64_t>(b.offsets.size()) - 1;
        std::vector<float> v(at(rows * tab.dim));
        me.st.hbm.read_block(me.result[at(t)], reinterpret_cast<uint32_t*>(v.data()),
                             rows * tab.dim);
        m_res.pooled[at(p)].push_back(std::move(v));
      }
      m_res.owner_row_bytes = std::max(m_res.owner_row_bytes, owner);
      m_res.remote_row_bytes = std::max(m_res.remote_row_bytes, remote);
    }
  }

  const core::CoreSpec& m_core;
  const SystemSpec& m_system;
  const ShardMap& m_map;
  const std::vector<ShardedTable>& m_tables;
  const std::vector<std::vector<LookupBags>>& m_bags;
  numerics::Combiner m_combiner;
  const TableValue& m_value;
  ThreadPool m_serial{1};
  ThreadPool* m_pool;
  fabric::Fabric m_fabric;
  int m_P, m_T;
  std::vector<std::unique_ptr<Proc>> m_procs;
  ShardedLookupResult m_res;
};

}  // namespace

ShardedLookupResult sharded_lookup(const core::CoreSpec& core, const SystemSpec& system,
                                   const ShardMap& map, const std::vector<ShardedTable>& tables,
                                   const std::vector<std::vector<LookupBags>>& bags,
                                   numerics::Combiner combiner, const TableValue& value,
                                   ThreadPool* pool) {
  const int P = map.processors();
  const int T = static_cast<int>(tables.size());
  if (P != system.processors())
    throw Error("sparse shard", fmt::format("a placement over {} processors on a system of {}", P,
                                            system.processors()));
  if (static_cast<int>(bags.size()) != P)
    throw Error("sparse shard",
                fmt::format("bags for {} processors, the system has {}", bags.size(), P));
  for (int p = 0; p < P; ++p) {
    if (static_cast<int>(bags[at(p)].size()) != T)
      throw Error("sparse shard", fmt::format("processor {}: bags for {} tables, not {}", p,
                                              bags[at(p)].size(), T));
    for (int t = 0; t < T; ++t) check_bags(bags[at(p)][at(t)], tables[at(t)], p, t);
  }
  return Lookup(core, system, map, tables, bags, combiner, value, pool).run();
}

}  // namespace tessera::system
