#include "system/sparse_shard_engine.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include <fmt/format.h>

#include "common/error.h"

namespace tessera::system::shard {

int64_t Proc::alloc(int64_t words, int p) {
  const int64_t first = next;
  next += std::max<int64_t>(words, 1);
  if (next > st.hbm.size())
    throw Error("sparse shard", fmt::format("processor {}: its tables and lookup buffers need "
                                            "more than the {} words of its HBM",
                                            p, st.hbm.size()));
  return first;
}

Engine::Engine(const core::CoreSpec& core, const SystemSpec& system, const ShardMap& map,
               std::vector<ShardedTable> tables, TableValue value, bool accumulators,
               ThreadPool* pool, RankGroup* ranks)
    : m_core(core),
      m_system(system),
      m_map(map),
      m_tables(std::move(tables)),
      m_value(std::move(value)),
      m_pool(pool != nullptr ? pool : &m_serial),
      m_ranks(ranks),
      m_P(map.processors()),
      m_T(static_cast<int>(m_tables.size())) {
  m_procs.resize(at(m_P));
  m_pool->run(m_P, [&](int p) {
    auto me = std::make_unique<Proc>(m_core);
    me->base.assign(at(m_T), -1);
    me->state.assign(at(m_T), -1);
    me->local_rows.assign(at(m_T), 0);
    me->written.resize(at(m_T));
    me->steps.assign(at(m_T), 0);
    for (int t = 0; t < m_T; ++t) {
      const ShardedTable& tab = m_tables[at(t)];
      const int64_t rows = m_map.local_rows(t, tab.rows, p);
      if (rows <= 0) continue;
      me->local_rows[at(t)] = rows;
      me->base[at(t)] = me->alloc(rows * tab.dim, p);
      if (accumulators) me->state[at(t)] = me->alloc(rows * tab.dim, p);
      me->written[at(t)].assign(at(rows), false);
    }
    me->tables_end = me->next;
    m_procs[at(p)] = std::move(me);
  });
}

void Engine::begin(bool new_step) {
  m_fabric = std::make_unique<fabric::Fabric>(m_system, 0);
  m_fabric->set_workers(m_pool);
  if (m_ranks != nullptr) m_fabric->set_ranks(m_ranks);
  each([&](Proc& me, int) {
    if (new_step) me.next = me.tables_end;
    me.sc = std::make_unique<core::SparseCore>(m_core);
    me.table.assign(at(m_T), -1);
    for (int t = 0; t < m_T; ++t) {
      if (me.base[at(t)] < 0) continue;
      const ShardedTable& tab = m_tables[at(t)];
      me.table[at(t)] = me.sc->add_table({tab.name, me.base[at(t)], me.local_rows[at(t)], tab.dim},
                                         me.st.hbm.size());
      me.sc->set_adagrad_step(me.table[at(t)], me.steps[at(t)]);
    }
  });
}

void Engine::end() {
  for (auto& q : m_procs) {
    Proc& me = *q;
    for (int t = 0; t < m_T; ++t)
      if (me.table[at(t)] >= 0) me.steps[at(t)] = me.sc->adagrad_step(me.table[at(t)]);
    const core::SparseCoreStats& s = me.sc->stats();
#define X(field, what) m_stats.field += s.field;
#include "core/sparse_counters.def"
#undef X
  }
}

void Engine::each(const std::function<void(Proc&, int)>& body) {
  m_pool->run(m_P, [&](int p) { body(proc(p), p); });
}

uint64_t Engine::packets() {
  m_fabric->share_state();
  return m_fabric->stats().packets;
}

int64_t Engine::latest(int64_t Proc::*end) const {
  int64_t m = 0;
  for (const auto& q : m_procs) m = std::max(m, (*q).*end);
  return m;
}

int64_t Engine::global_row(int p, int64_t local) const {
  return m_map.placement() == ShardPlacement::kMod ? local * m_P + p : local;
}

void Engine::write_touched_rows(Proc& me, int p, int t) {
  if (me.base[at(t)] < 0) return;
  const int64_t dim = m_tables[at(t)].dim;
  std::vector<bool>& written = me.written[at(t)];
  std::vector<uint32_t> row(at(dim));
  for (int r = 0; r < m_P; ++r)
    for (uint32_t local : list(r, p, t)) {
      if (written[local]) continue;
      written[local] = true;
      const int64_t g = global_row(p, local);
      for (int64_t c = 0; c < dim; ++c) row[at(c)] = std::bit_cast<uint32_t>(m_value(t, g, c));
      me.st.hbm.write_block(me.base[at(t)] + local * dim, row.data(), dim);
    }
}

fabric::Endpoint Engine::endpoint(int p) const {
  return {p / m_system.cores_per_chip, p % m_system.cores_per_chip};
}

int Engine::processor(const fabric::Endpoint& e) const {
  return e.chip * m_system.cores_per_chip + e.core;
}

fabric::Picos Engine::ps(int64_t cycles) const {
  return std::llround(static_cast<double>(cycles) * 1e12 / m_core.clock_hz);
}

int64_t Engine::cycle_at(fabric::Picos t) const {  // the first cycle at or after t (0.5 ps)
  return static_cast<int64_t>(std::ceil((static_cast<double>(t) - 0.5) * m_core.clock_hz / 1e12));
}

int64_t Engine::all_to_all(int64_t compute_end, ExchangeBytes& x,
                           const std::function<Segment(int, int, int)>& segment) {
  const fabric::Picos barrier = fabric::ns_to_ps(m_system.barrier_latency_ns);
  const fabric::Picos post = ps(compute_end) + barrier;
  const fabric::Routing& routing = m_fabric->routing();
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
      x.bytes += b;
      if (tr.src.chip != tr.dst.chip) {
        const std::vector<int> path = routing.path(tr.src.chip, tr.dst.chip);
        x.max_hops = std::max(x.max_hops, static_cast<int>(path.size()) - 1);
        for (size_t i = 1; i < path.size(); ++i)
          load[at(routing.channel_between(path[i - 1], path[i]))] += b;
      }
      m_fabric->post(post, std::move(tr));
    }
  if (!load.empty()) x.busiest_link += *std::max_element(load.begin(), load.end());
  fabric::Picos last = post;
  for (const fabric::Arrival& a : m_fabric->drain()) {
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

}  // namespace tessera::system::shard
