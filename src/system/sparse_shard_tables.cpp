#include "system/sparse_shard_tables.h"

#include <algorithm>
#include <bit>

#include <fmt/format.h>

#include "common/error.h"
#include "system/sparse_shard_engine.h"

namespace tessera::system {

namespace {

using shard::at;
using shard::Engine;
using shard::Proc;
using shard::Segment;

class Backward {
 public:
  Backward(Engine& engine, const std::vector<std::vector<LookupBags>>& bags,
           const std::vector<std::vector<std::vector<float>>>& grads, numerics::Combiner combiner,
           const ShardedOptimizer& opt, int64_t start)
      : m_e(engine),
        m_tables(engine.tables()),
        m_bags(bags),
        m_grads(grads),
        m_combiner(combiner),
        m_opt(opt),
        m_start(start),
        m_P(engine.processors()),
        m_T(engine.table_count()) {}

  ShardedBackwardResult run() {
    m_e.begin(false);
    m_e.each([&](Proc& me, int p) { scatter(me, p); });
    m_res.span.scatter = m_e.latest(&Proc::scatter_end);
    shard::ExchangeBytes x;
    m_res.span.grads = m_e.all_to_all(m_res.span.scatter, x, [&](int r, int o, int t) {
      const Proc &req = m_e.proc(r), &own = m_e.proc(o);
      const int64_t dim = m_tables[at(t)].dim;
      return Segment{req.partial[at(t)] + req.by_owner[at(t)][at(o)] * dim,
                     own.in_grads[at(t)] + own.by_requester[at(t)][at(r)] * dim,
                     static_cast<int64_t>(m_e.list(r, o, t).size()) * dim};
    });
    m_e.each([&](Proc& me, int) { update(me); });
    m_res.span.update = m_res.cycles = m_e.latest(&Proc::update_end);
    m_res.grad_bytes = x.bytes;
    m_res.busiest_link_grad_bytes = x.busiest_link;
    m_res.packets = m_e.packets();
    for (int p = 0; p < m_P; ++p)
      for (int t = 0; t < m_T; ++t) {
        const Proc& me = m_e.proc(p);
        if (me.table[at(t)] >= 0 && me.by_requester[at(t)].back() > 0)
          m_res.rows_updated += me.st.hbm.read(me.unique_count[at(t)]);
      }
    m_e.end();
    return m_res;
  }

 private:
  // 1. scatter: this requester's bag gradients to one partial row per distinct id, in its lists'
  // order; and the buffers it receives into as owner.
  void scatter(Proc& me, int p) {
    for (auto* v : {&me.grads, &me.count, &me.partial, &me.in_grads, &me.unique, &me.unique_count,
                    &me.inverse, &me.summed})
      v->assign(at(m_T), 0);
    int64_t now = m_start;
    for (int t = 0; t < m_T; ++t) {
      const ShardedTable& tab = m_tables[at(t)];
      const LookupBags& b = m_bags[at(p)][at(t)];
      const std::vector<float>& g = m_grads[at(p)][at(t)];
      const auto bags = static_cast<int64_t>(b.offsets.size()) - 1;
      const int64_t u = me.by_owner[at(t)].back();
      me.grads[at(t)] = me.alloc(static_cast<int64_t>(g.size()), p);
      me.st.hbm.write_block(me.grads[at(t)], reinterpret_cast<const uint32_t*>(g.data()),
                            static_cast<int64_t>(g.size()));
      me.count[at(t)] = me.alloc(1, p);
      me.st.hbm.write(me.count[at(t)], static_cast<uint32_t>(u));
      me.partial[at(t)] = me.alloc(u * tab.dim, p);
      const int64_t m = me.by_requester[at(t)].back();
      me.in_grads[at(t)] = me.alloc(m * tab.dim, p);
      me.unique[at(t)] = me.alloc(m, p);
      me.unique_count[at(t)] = me.alloc(1, p);
      me.inverse[at(t)] = me.alloc(m, p);
      me.summed[at(t)] = me.alloc(m * tab.dim, p);
      if (u == 0) continue;
      const int partial = me.sc->add_table({tab.name + ".partial", me.partial[at(t)], u, tab.dim},
                                           me.st.hbm.size());
      me.sc->enqueue({core::SparseScatterAdd{partial,
                                             {me.ids[at(t)], me.offsets[at(t)], bags},
                                             m_combiner,
                                             me.grads[at(t)],
                                             me.ids[at(t)],
                                             me.count[at(t)],
                                             me.partial[at(t)]}});
      me.run_if(false, now, m_e.core().sparse.queue);
    }
    me.run_if(true, now, m_e.core().sparse.queue);
    me.scatter_end = now;
  }

  // 2. update: per table this owner holds rows of, the received partial sums added per distinct
  // row, requesters in order, and those rows updated.
  void update(Proc& me) {
    const int64_t queue = m_e.core().sparse.queue;
    int64_t now = m_res.span.grads;
    for (int t = 0; t < m_T; ++t) {
      const int table = me.table[at(t)];
      if (table < 0) continue;
      if (me.by_requester[at(t)].back() == 0) {
        if (m_opt.kind == core::SparseOptimizer::Adagrad)
          me.sc->set_adagrad_step(table, me.sc->adagrad_step(table) + 1);
        continue;
      }
      const core::SparseBags in{me.in_ids[at(t)], me.in_offsets[at(t)], m_P};
      me.sc->enqueue(
          {core::SparseDedup{in, me.unique[at(t)], me.unique_count[at(t)], me.inverse[at(t)]}});
      me.run_if(false, now, queue);
      me.sc->enqueue(
          {core::SparseScatterAdd{table, in, numerics::Combiner::None, me.in_grads[at(t)],
                                  me.inverse[at(t)], me.unique_count[at(t)], me.summed[at(t)]}});
      me.run_if(false, now, queue);
      me.sc->enqueue({core::SparseUpdate{table, me.unique[at(t)], me.unique_count[at(t)],
                                         me.summed[at(t)], m_opt.kind, m_opt.lr, m_opt.lr_decay,
                                         m_opt.eps, std::max<int64_t>(me.state[at(t)], 0)}});
      me.run_if(false, now, queue);
    }
    me.run_if(true, now, queue);
    me.update_end = now;
  }

  Engine& m_e;
  const std::vector<ShardedTable>& m_tables;
  const std::vector<std::vector<LookupBags>>& m_bags;
  const std::vector<std::vector<std::vector<float>>>& m_grads;
  numerics::Combiner m_combiner;
  const ShardedOptimizer& m_opt;
  int64_t m_start;
  int m_P, m_T;
  ShardedBackwardResult m_res;
};

}  // namespace

ShardedTables::ShardedTables(const core::CoreSpec& core, const SystemSpec& system,
                             const ShardMap& map, std::vector<ShardedTable> tables, TableValue init,
                             ShardedOptimizer optimizer, ThreadPool* pool, RankGroup* ranks)
    : m_opt(optimizer) {
  if (map.processors() != system.processors())
    throw Error("sparse shard", fmt::format("a placement over {} processors on a system of {}",
                                            map.processors(), system.processors()));
  m_engine =
      std::make_unique<Engine>(core, system, map, std::move(tables), std::move(init),
                               optimizer.kind == core::SparseOptimizer::Adagrad, pool, ranks);
}

ShardedTables::~ShardedTables() = default;

ShardedLookupResult ShardedTables::lookup(const std::vector<std::vector<LookupBags>>& bags,
                                          numerics::Combiner combiner, int64_t start) {
  m_looked_up = false;
  ShardedLookupResult r = shard::run_lookup(*m_engine, bags, combiner, true, start);
  m_bags = bags;
  m_combiner = combiner;
  m_looked_up = true;
  return r;
}

ShardedBackwardResult ShardedTables::backward(
    const std::vector<std::vector<std::vector<float>>>& grads, int64_t start) {
  if (!m_looked_up) throw Error("sparse shard", "a backward without a lookup before it");
  shard::check_per_table(
      grads, m_engine->processors(), m_engine->table_count(), "gradients", [&](int p, int t) {
        const LookupBags& b = m_bags[at(p)][at(t)];
        const size_t rows =
            m_combiner == numerics::Combiner::None ? b.ids.size() : b.offsets.size() - 1;
        const ShardedTable& tab = m_engine->tables()[at(t)];
        if (grads[at(p)][at(t)].size() != rows * at(tab.dim))
          throw Error("sparse shard",
                      fmt::format("processor {} table '{}': {} gradient words, its lookup gave {}",
                                  p, tab.name, grads[at(p)][at(t)].size(), rows * at(tab.dim)));
      });
  m_looked_up = false;
  return Backward(*m_engine, m_bags, grads, m_combiner, m_opt, start).run();
}

std::vector<float> ShardedTables::read(int table, int64_t r, bool accumulators) const {
  const ShardMap& map = m_engine->map();
  const ShardedTable& tab = m_engine->tables().at(at(table));
  if (r < 0 || r >= tab.rows)
    throw Error("sparse shard",
                fmt::format("row {} outside table '{}' ({} rows)", r, tab.name, tab.rows));
  const Proc& me = m_engine->proc(map.owner(table, r));
  const int64_t local = map.local_row(r);
  std::vector<float> v(at(tab.dim), 0.0f);
  if (!me.written[at(table)][at(local)]) {
    if (!accumulators)
      for (int64_t c = 0; c < tab.dim; ++c) v[at(c)] = m_engine->value()(table, r, c);
    return v;
  }
  const int64_t addr = accumulators ? me.state[at(table)] : me.base[at(table)];
  if (addr >= 0)
    me.st.hbm.read_block(addr + local * tab.dim, reinterpret_cast<uint32_t*>(v.data()), tab.dim);
  return v;
}

std::vector<float> ShardedTables::row(int table, int64_t r) const {
  return read(table, r, false);
}

std::vector<float> ShardedTables::accumulators(int table, int64_t r) const {
  return read(table, r, true);
}

int64_t ShardedTables::adagrad_step(int table) const {
  const Proc& me = m_engine->proc(m_engine->map().owner(table, 0));
  return me.steps.at(at(table));
}

const core::SparseCoreStats& ShardedTables::sparse_stats() const {
  return m_engine->stats();
}

int64_t ShardedTables::hbm_pages() const {
  int64_t n = 0;
  for (int p = 0; p < m_engine->processors(); ++p) n += m_engine->proc(p).st.hbm.pages_allocated();
  return n;
}

}  // namespace tessera::system
