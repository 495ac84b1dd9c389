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
#include "system/sparse_shard_engine.h"

namespace tessera::system {

namespace {

using shard::at;
using shard::Engine;
using shard::Proc;
using shard::Segment;

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

class Lookup {
 public:
  Lookup(Engine& engine, const std::vector<std::vector<LookupBags>>& bags,
         numerics::Combiner combiner, bool dedup, int64_t start)
      : m_e(engine),
        m_core(engine.core()),
        m_map(engine.map()),
        m_tables(engine.tables()),
        m_bags(bags),
        m_combiner(combiner),
        m_dedup(dedup),
        m_start(start),
        m_P(engine.processors()),
        m_T(engine.table_count()) {}

  ShardedLookupResult run() {
    m_e.begin(true);
    m_e.each([&](Proc& me, int p) { route(me, p); });
    m_res.span.route = m_e.latest(&Proc::route_end);
    m_e.each([&](Proc& me, int p) { prepare(me, p); });
    shard::ExchangeBytes ids, rows;
    m_res.span.ids = m_e.all_to_all(m_res.span.route, ids, [&](int r, int o, int t) {
      const Proc &req = m_e.proc(r), &own = m_e.proc(o);
      return Segment{req.out_ids[at(t)] + req.by_owner[at(t)][at(o)],
                     own.in_ids[at(t)] + own.by_requester[at(t)][at(r)],
                     static_cast<int64_t>(m_e.list(r, o, t).size())};
    });
    m_e.each([&](Proc& me, int) { gather(me); });
    m_res.span.gather = m_e.latest(&Proc::gather_end);
    m_res.span.rows = m_e.all_to_all(m_res.span.gather, rows, [&](int o, int r, int t) {
      const Proc &own = m_e.proc(o), &req = m_e.proc(r);
      const int64_t dim = m_tables[at(t)].dim;
      return Segment{own.out_rows[at(t)] + own.by_requester[at(t)][at(r)] * dim,
                     req.recv[at(t)] + req.by_owner[at(t)][at(o)] * dim,
                     static_cast<int64_t>(m_e.list(r, o, t).size()) * dim};
    });
    m_e.each([&](Proc& me, int p) { combine(me, p); });
    m_res.span.combine = m_res.cycles = m_e.latest(&Proc::combine_end);
    m_res.id_bytes = ids.bytes;
    m_res.row_bytes = rows.bytes;
    m_res.busiest_link_id_bytes = ids.busiest_link;
    m_res.busiest_link_row_bytes = rows.busiest_link;
    m_res.max_hops = std::max(ids.max_hops, rows.max_hops);
    m_res.packets = m_e.packets();
    results();
    m_e.end();
    return std::move(m_res);
  }

 private:
  const LookupBags& bags_of(int p, int t) const { return m_bags[at(p)][at(t)]; }

  // This table's lists: every id position in order, or (dedup) each owner's distinct rows in
  // ascending order; and every position's owner and place in that owner's list.
  void split(Proc& me, int t, const LookupBags& b) {
    std::vector<std::vector<uint32_t>>& to = me.lists[at(t)];
    const auto place = [&](uint32_t id) {
      const int o = m_map.owner(t, id);
      to[at(o)].push_back(static_cast<uint32_t>(m_map.local_row(id)));
      return std::pair<uint32_t, uint32_t>(static_cast<uint32_t>(o),
                                           static_cast<uint32_t>(to[at(o)].size() - 1));
    };
    std::vector<uint32_t> distinct;
    std::vector<std::pair<uint32_t, uint32_t>> slots;
    if (m_dedup) {
      distinct = b.ids;
      std::sort(distinct.begin(), distinct.end());
      distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
      for (uint32_t id : distinct) slots.push_back(place(id));
    }
    for (uint32_t id : b.ids) {
      const auto [o, i] =
          m_dedup
              ? slots[at(std::lower_bound(distinct.begin(), distinct.end(), id) - distinct.begin())]
              : place(id);
      me.slot_owner[at(t)].push_back(o);
      me.slot_index[at(t)].push_back(i);
    }
  }

  // 1. route: this processor's ids split by owner, the lists written to its HBM.
  void route(Proc& me, int p) {
    const core::SparseCoreSpec& u = m_core.sparse;
    me.lists.assign(at(m_T), std::vector<std::vector<uint32_t>>(at(m_P)));
    me.slot_owner.assign(at(m_T), {});
    me.slot_index.assign(at(m_T), {});
    me.by_owner.resize(at(m_T));
    me.out_ids.resize(at(m_T));
    int64_t in_requests = 0, out_requests = 0, n = 0;
    for (int t = 0; t < m_T; ++t) {
      const LookupBags& b = bags_of(p, t);
      split(me, t, b);
      const std::vector<std::vector<uint32_t>>& to = me.lists[at(t)];
      me.by_owner[at(t)] =
          shard::firsts(m_P, [&](int o) { return static_cast<int64_t>(to[at(o)].size()); });
      const auto ids = static_cast<int64_t>(b.ids.size());
      me.out_ids[at(t)] = me.alloc(me.by_owner[at(t)].back(), p);
      for (int o = 0; o < m_P; ++o) {
        me.st.hbm.write_block(me.out_ids[at(t)] + me.by_owner[at(t)][at(o)], to[at(o)].data(),
                              static_cast<int64_t>(to[at(o)].size()));
        out_requests += me.sc->requests_of(4 * static_cast<int64_t>(to[at(o)].size()));
      }
      if (m_dedup) out_requests += me.sc->requests_of(4 * ids);  // the inverse
      n += ids;
      in_requests += me.sc->requests_of(4 * ids) +
                     me.sc->requests_of(4 * static_cast<int64_t>(b.offsets.size()));
    }
    me.route_end = m_start + u.descriptor_cycles + me.sc->hbm_stream(in_requests) +
                   ceil_div(n, u.ids_per_cycle) + me.sc->hbm_stream(out_requests);
  }

  // Between route and the ids' exchange: the owner's rows some list touches, and every buffer of
  // the later supersteps.
  void prepare(Proc& me, int p) {
    for (auto* v :
         {&me.in_ids, &me.in_offsets, &me.out_rows, &me.recv, &me.ids, &me.offsets, &me.result})
      v->resize(at(m_T));
    me.by_requester.resize(at(m_T));
    for (int t = 0; t < m_T; ++t) {
      const ShardedTable& tab = m_tables[at(t)];
      m_e.write_touched_rows(me, p, t);
      std::vector<int64_t>& from = me.by_requester[at(t)];
      from =
          shard::firsts(m_P, [&](int r) { return static_cast<int64_t>(m_e.list(r, p, t).size()); });
      me.in_ids[at(t)] = me.alloc(from.back(), p);
      me.in_offsets[at(t)] = me.alloc(m_P + 1, p);
      me.out_rows[at(t)] = me.alloc(from.back() * tab.dim, p);
      const std::vector<uint32_t> offsets(from.begin(), from.end());
      me.st.hbm.write_block(me.in_offsets[at(t)], offsets.data(), m_P + 1);
      const LookupBags& b = bags_of(p, t);
      const auto n = static_cast<int64_t>(b.ids.size());
      const auto bags = static_cast<int64_t>(b.offsets.size()) - 1;
      me.recv[at(t)] = me.alloc(me.by_owner[at(t)].back() * tab.dim, p);
      me.ids[at(t)] = me.alloc(n, p);
      me.offsets[at(t)] = me.alloc(bags + 1, p);
      me.result[at(t)] = me.alloc((m_combiner == numerics::Combiner::None ? n : bags) * tab.dim, p);
    }
  }

  // 2. gather: the rows of every list this owner received, requesters in order.
  void gather(Proc& me) {
    int64_t now = m_res.span.ids;
    for (int t = 0; t < m_T; ++t) {
      if (me.by_requester[at(t)].back() == 0) continue;
      me.sc->enqueue({core::SparseGather{me.table[at(t)],
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
      const int received =
          me.sc->add_table({tab.name + ".received", me.recv[at(t)],
                            std::max<int64_t>(me.by_owner[at(t)].back(), 1), tab.dim},
                           me.st.hbm.size());
      me.sc->enqueue({core::SparseGather{received,
                                         {me.ids[at(t)], me.offsets[at(t)], bags},
                                         m_combiner,
                                         core::SparseDest::Hbm,
                                         me.result[at(t)]}});
      me.run_if(false, now, m_core.sparse.queue);
    }
    me.run_if(true, now, m_core.sparse.queue);
    me.combine_end = now;
  }

  // The pooled results and the HBM row traffic.
  void results() {
    const core::SparseCoreSpec& u = m_core.sparse;
    m_res.pooled.resize(at(m_P));
    for (int p = 0; p < m_P; ++p) {
      Proc& me = m_e.proc(p);
      int64_t owner = 0, remote = 0;
      for (int t = 0; t < m_T; ++t) {
        const ShardedTable& tab = m_tables[at(t)];
        const int64_t row_bytes = me.sc->requests_of(4 * tab.dim) * u.hbm_request_bytes;
        owner += me.by_requester[at(t)].back() * row_bytes;
        remote += (me.by_owner[at(t)].back() - static_cast<int64_t>(m_e.list(p, p, t).size())) *
                  row_bytes;
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

  Engine& m_e;
  const core::CoreSpec& m_core;
  const ShardMap& m_map;
  const std::vector<ShardedTable>& m_tables;
  const std::vector<std::vector<LookupBags>>& m_bags;
  numerics::Combiner m_combiner;
  bool m_dedup;
  int64_t m_start;
  int m_P, m_T;
  ShardedLookupResult m_res;
};

void check_all_bags(const std::vector<std::vector<LookupBags>>& bags,
                    const std::vector<ShardedTable>& tables, int P) {
  shard::check_per_table(bags, P, static_cast<int>(tables.size()), "bags", [&](int p, int t) {
    check_bags(bags[at(p)][at(t)], tables[at(t)], p, t);
  });
}

}  // namespace

ShardedLookupResult sharded_lookup(const core::CoreSpec& core, const SystemSpec& system,
                                   const ShardMap& map, const std::vector<ShardedTable>& tables,
                                   const std::vector<std::vector<LookupBags>>& bags,
                                   numerics::Combiner combiner, const TableValue& value,
                                   ThreadPool* pool) {
  const int P = map.processors();
  if (P != system.processors())
    throw Error("sparse shard", fmt::format("a placement over {} processors on a system of {}", P,
                                            system.processors()));
  check_all_bags(bags, tables, P);
  Engine engine(core, system, map, tables, value, false, pool);
  return Lookup(engine, bags, combiner, false, 0).run();
}

namespace shard {

ShardedLookupResult run_lookup(Engine& engine, const std::vector<std::vector<LookupBags>>& bags,
                               numerics::Combiner combiner, bool dedup, int64_t start) {
  check_all_bags(bags, engine.tables(), engine.processors());
  return Lookup(engine, bags, combiner, dedup, start).run();
}

}  // namespace shard

}  // namespace tessera::system
