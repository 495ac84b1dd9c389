#include "core/sparse_core.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include <fmt/format.h>

#include "common/error.h"
#include "common/int_math.h"
#include "core/fault.h"
#include "numerics/sparse_optimizer.h"

namespace tessera::core {

namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

std::string bags_text(const SparseBags& b) {
  return fmt::format("bags {} ids @{} offsets @{}", b.bags, b.ids, b.offsets);
}

std::string table_name(const std::vector<SparseTable>& tables, int t) {
  return t >= 0 && t < static_cast<int>(tables.size()) ? tables[static_cast<size_t>(t)].name
                                                       : fmt::format("#{}", t);
}

float* row_of(std::vector<float>& v, int64_t row, int64_t dim) {
  return v.data() + row * dim;
}

}  // namespace

std::string describe(const SparseDescriptor& d, const std::vector<SparseTable>& tables) {
  std::string text = std::visit(
      Overloaded{
          [&](const SparseGather& g) {
            return fmt::format("gather {} {} {} -> {} @{}", table_name(tables, g.table),
                               bags_text(g.in), numerics::combiner_name(g.combiner),
                               g.to == SparseDest::Hbm ? "hbm" : "vmem", g.dst);
          },
          [&](const SparseDedup& g) {
            return fmt::format("dedup {} -> unique @{} count @{} inverse @{}", bags_text(g.in),
                               g.unique, g.count, g.inverse);
          },
          [&](const SparseScatterAdd& s) {
            if (s.dense)
              return fmt::format("scatter_add {} {} {} src @{} -> dense @{}",
                                 table_name(tables, s.table), bags_text(s.in),
                                 numerics::combiner_name(s.combiner), s.src, s.dst);
            return fmt::format("scatter_add {} {} {} src @{} inverse @{} count @{} -> @{}",
                               table_name(tables, s.table), bags_text(s.in),
                               numerics::combiner_name(s.combiner), s.src, s.inverse, s.count,
                               s.dst);
          },
          [&](const SparseUpdate& u) {
            return fmt::format(
                "update {} {} ids @{} count @{} grads @{}", table_name(tables, u.table),
                u.optimizer == SparseOptimizer::Sgd ? "sgd" : "adagrad", u.ids, u.count, u.src);
          },
          [&](const SparseWait& w) { return fmt::format("wait #{}, {}", w.flag, w.count); },
      },
      d.op);
  if (d.signal >= 0) text += fmt::format(" signal #{}", d.signal);
  return "sparse " + text;
}

SparseCore::SparseCore(const CoreSpec& spec)
    : m_spec(spec.sparse),
      m_core_flags(spec.sync_flags),
      m_own(static_cast<size_t>(spec.sparse.flags), 0u) {}

int SparseCore::add_table(SparseTable table, int64_t hbm_words) {
  if (table.rows <= 0 || table.dim <= 0)
    throw Error("sparse core", fmt::format("table '{}': {} rows of {} words; both must be positive",
                                           table.name, table.rows, table.dim));
  if (table.base < 0 || table.base + table.rows * table.dim > hbm_words)
    throw Error("sparse core",
                fmt::format("table '{}': HBM words [{}, {}) outside [0, {})", table.name,
                            table.base, table.base + table.rows * table.dim, hbm_words));
  m_tables.push_back(std::move(table));
  m_steps.push_back(0);
  return static_cast<int>(m_tables.size()) - 1;
}

void SparseCore::set_adagrad_step(int t, int64_t step) {
  if (t < 0 || t >= static_cast<int>(m_tables.size()) || step < 0)
    throw Error("sparse core", fmt::format("Adagrad step {} of table {}: no such table or a "
                                           "negative step",
                                           step, t));
  m_steps[static_cast<size_t>(t)] = step;
}

void SparseCore::enqueue(SparseDescriptor d) {
  const std::string what = describe(d, m_tables);
  if (queued() >= m_spec.queue)
    throw Error("sparse core", fmt::format("{}: the descriptor queue holds {} (core.sparse.queue)",
                                           what, m_spec.queue));
  if (d.signal < -1 || d.signal >= m_core_flags)
    throw Error("sparse core", fmt::format("{}: tensor-core flag {} outside [0, {})", what,
                                           d.signal, m_core_flags));
  const int tables = static_cast<int>(m_tables.size());
  const auto check_table = [&](int t) {
    if (t < 0 || t >= tables)
      throw Error("sparse core",
                  fmt::format("{}: table {} is not registered ({} tables)", what, t, tables));
  };
  std::visit(Overloaded{
                 [&](const SparseGather& g) { check_table(g.table); },
                 [&](const SparseDedup&) {},
                 [&](const SparseScatterAdd& s) { check_table(s.table); },
                 [&](const SparseUpdate& u) { check_table(u.table); },
                 [&](const SparseWait& w) {
                   if (w.flag < 0 || w.flag >= m_spec.flags)
                     throw Error("sparse core",
                                 fmt::format("{}: sparse-core flag {} outside [0, {})", what,
                                             w.flag, m_spec.flags));
                 },
             },
             d.op);
  m_queue.push_back(std::move(d));
}

void SparseCore::signal(int flag, int64_t at) {
  if (flag < 0 || flag >= m_spec.flags)
    throw Error("sparse core",
                fmt::format("signal of sparse-core flag {} outside [0, {})", flag, m_spec.flags));
  m_incoming.add(flag, at);
}

void SparseCore::fault(const std::string& why) const {
  const SparseDescriptor& d = m_queue[static_cast<size_t>(m_pc)];
  throw SimFault(m_pc, m_at, describe(d, m_tables), "sparse core: " + why);
}

void SparseCore::check_hbm(const char* what, int64_t addr, int64_t words) const {
  if (addr < 0 || words < 0 || addr + words > m_core->hbm.size())
    fault(fmt::format("{}: HBM words [{}, {}) outside [0, {})", what, addr, addr + words,
                      m_core->hbm.size()));
}

void SparseCore::check_id(const SparseTable& t, uint32_t id, int64_t position) const {
  if (id >= t.rows)
    fault(fmt::format("id {} outside table '{}' ({} rows) at position {}", id, t.name, t.rows,
                      position));
}

SparseCore::Bags SparseCore::read_bags(const SparseBags& b) {
  if (b.bags < 0) fault(fmt::format("{} bags", b.bags));
  Bags out;
  check_hbm("offsets", b.offsets, b.bags + 1);
  out.offsets.resize(static_cast<size_t>(b.bags + 1));
  m_core->hbm.read_block(b.offsets, out.offsets.data(), b.bags + 1);
  if (out.offsets[0] != 0) fault(fmt::format("offsets[0] = {}, not 0", out.offsets[0]));
  for (int64_t i = 0; i < b.bags; ++i)
    if (out.offsets[static_cast<size_t>(i + 1)] < out.offsets[static_cast<size_t>(i)])
      fault(fmt::format("offsets[{}] = {} < offsets[{}] = {}", i + 1,
                        out.offsets[static_cast<size_t>(i + 1)], i,
                        out.offsets[static_cast<size_t>(i)]));
  const int64_t n = out.offsets.back();
  check_hbm("ids", b.ids, n);
  out.ids.resize(static_cast<size_t>(n));
  m_core->hbm.read_block(b.ids, out.ids.data(), n);
  m_stats.ids += n;
  return out;
}

uint32_t SparseCore::read_count(int64_t addr) {
  check_hbm("count", addr, 1);
  return m_core->hbm.read(addr);
}

int64_t SparseCore::requests_of(int64_t bytes) const {
  return ceil_div(bytes, m_spec.hbm_request_bytes);
}

int64_t SparseCore::hbm_stream(int64_t requests) const {
  if (requests <= 0) return 0;
  const double x = static_cast<double>(m_spec.hbm_request_bytes) / m_spec.hbm_bytes_per_cycle;
  const double interval = std::max(x, (static_cast<double>(m_spec.hbm_latency) + x) /
                                          static_cast<double>(m_spec.hbm_outstanding));
  // The small tolerance keeps a whole number of cycles computed inexactly from rounding up.
  return m_spec.hbm_latency +
         static_cast<int64_t>(std::ceil(static_cast<double>(requests - 1) * interval + x - 1e-9));
}

int64_t SparseCore::stream_bytes(std::initializer_list<int64_t> bytes, bool write) {
  int64_t requests = 0;
  for (int64_t b : bytes) requests += requests_of(b);
  m_stats.hbm_requests += requests;
  (write ? m_stats.hbm_write_bytes : m_stats.hbm_read_bytes) += requests * m_spec.hbm_request_bytes;
  return hbm_stream(requests);
}

int64_t SparseCore::row_stream(const SparseTable& t, int64_t rows, bool write) {
  const int64_t requests = rows * requests_of(4 * t.dim);
  (write ? m_stats.row_writes : m_stats.row_reads) += rows;
  m_stats.hbm_requests += requests;
  (write ? m_stats.hbm_write_bytes : m_stats.hbm_read_bytes) += requests * m_spec.hbm_request_bytes;
  return hbm_stream(requests);
}

int64_t SparseCore::front(int64_t ids) const {
  return ceil_div(ids, m_spec.ids_per_cycle);
}

int64_t SparseCore::simd(int64_t ops) const {
  return ceil_div(ops, m_spec.simd_width);
}

int64_t SparseCore::gather(const SparseGather& g, int64_t start) {
  const SparseTable& t = m_tables[static_cast<size_t>(g.table)];
  const Bags b = read_bags(g.in);
  const auto n = static_cast<int64_t>(b.ids.size());
  const int64_t dim = t.dim;
  const bool none = g.combiner == Combiner::None;
  const int64_t out_rows = none ? n : g.in.bags;
  std::vector<float> out(static_cast<size_t>(out_rows * dim), 0.0f);
  std::vector<float> row(static_cast<size_t>(dim));
  for (int64_t bag = 0; bag < g.in.bags; ++bag) {
    const int64_t first = b.offsets[static_cast<size_t>(bag)];
    const int64_t end = b.offsets[static_cast<size_t>(bag + 1)];
    for (int64_t i = first; i < end; ++i) {
      const uint32_t id = b.ids[static_cast<size_t>(i)];
      check_id(t, id, i);
      if (none) {  // the row itself
        m_core->hbm.read_block(t.base + id * dim, reinterpret_cast<uint32_t*>(row_of(out, i, dim)),
                               dim);
        continue;
      }
      m_core->hbm.read_block(t.base + id * dim, reinterpret_cast<uint32_t*>(row.data()), dim);
      numerics::bag_accumulate(row_of(out, bag, dim), row.data(), dim);
    }
    if (!none) numerics::bag_finish(row_of(out, bag, dim), dim, end - first, g.combiner);
  }
  const int64_t words = out_rows * dim;
  const auto* data = reinterpret_cast<const uint32_t*>(out.data());
  int64_t out_cycles;
  if (g.to == SparseDest::Hbm) {
    check_hbm("gather output", g.dst, words);
    m_core->hbm.write_block(g.dst, data, words);
    out_cycles = stream_bytes({4 * words}, true);
  } else {
    if (g.dst < 0 || g.dst + words > m_core->vmem.size())
      fault(fmt::format("gather output: vector memory words [{}, {}) outside [0, {})", g.dst,
                        g.dst + words, m_core->vmem.size()));
    std::copy_n(data, words, m_core->vmem.data() + g.dst);
    m_stats.vmem_bytes += 4 * words;
    out_cycles = m_spec.vmem_latency +
                 static_cast<int64_t>(std::ceil(
                     static_cast<double>(4 * words) / m_spec.vmem_bytes_per_cycle - 1e-9));
  }
  const int64_t ops = none ? 0 : n * dim + (g.combiner == Combiner::Mean ? g.in.bags * dim : 0);
  m_stats.element_ops += ops;
  m_stats.bags += g.in.bags;
  ++m_stats.gathers;
  const int64_t meta = stream_bytes({4 * n, 4 * (g.in.bags + 1)}, false);
  const int64_t body = std::max({row_stream(t, n, false), front(n), simd(ops)});
  return start + meta + body + out_cycles;
}

int64_t SparseCore::dedup(const SparseDedup& d, int64_t start) {
  const Bags b = read_bags(d.in);
  const auto n = static_cast<int64_t>(b.ids.size());
  std::vector<uint32_t> unique = b.ids;
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  const auto u = static_cast<int64_t>(unique.size());
  std::vector<uint32_t> inverse(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    inverse[static_cast<size_t>(i)] = static_cast<uint32_t>(
        std::lower_bound(unique.begin(), unique.end(), b.ids[static_cast<size_t>(i)]) -
        unique.begin());
  check_hbm("dedup unique ids", d.unique, u);
  check_hbm("dedup count", d.count, 1);
  check_hbm("dedup inverse", d.inverse, n);
  m_core->hbm.write_block(d.unique, unique.data(), u);
  m_core->hbm.write(d.count, static_cast<uint32_t>(u));
  m_core->hbm.write_block(d.inverse, inverse.data(), n);
  m_stats.unique_ids += u;
  ++m_stats.dedups;
  const int64_t meta = stream_bytes({4 * n, 4 * (d.in.bags + 1)}, false);
  return start + meta + front(n) + stream_bytes({4 * u, 4 * n, 4}, true);
}

int64_t SparseCore::scatter_add(const SparseScatterAdd& s, int64_t start) {
  const SparseTable& t = m_tables[static_cast<size_t>(s.table)];
  const int64_t dim = t.dim;
  const Bags b = read_bags(s.in);
  const auto n = static_cast<int64_t>(b.ids.size());
  const int64_t u = s.dense ? t.rows : read_count(s.count);
  std::vector<uint32_t> inverse;
  if (s.dense) {
    for (int64_t i = 0; i < n; ++i) check_id(t, b.ids[static_cast<size_t>(i)], i);
    inverse = b.ids;
  } else {
    check_hbm("scatter_add inverse", s.inverse, n);
    inverse.resize(static_cast<size_t>(n));
    m_core->hbm.read_block(s.inverse, inverse.data(), n);
  }
  const bool none = s.combiner == Combiner::None;
  const int64_t in_rows = none ? n : s.in.bags;
  check_hbm("scatter_add gradients", s.src, in_rows * dim);
  std::vector<float> grads(static_cast<size_t>(in_rows * dim));
  m_core->hbm.read_block(s.src, reinterpret_cast<uint32_t*>(grads.data()), in_rows * dim);
  std::vector<float> out(static_cast<size_t>(u * dim), 0.0f);
  for (int64_t bag = 0; bag < s.in.bags; ++bag) {
    const int64_t first = b.offsets[static_cast<size_t>(bag)];
    const int64_t end = b.offsets[static_cast<size_t>(bag + 1)];
    for (int64_t i = first; i < end; ++i) {
      const uint32_t slot = inverse[static_cast<size_t>(i)];
      if (slot >= u) fault(fmt::format("inverse[{}] = {} outside the {} distinct ids", i, slot, u));
      numerics::bag_scatter(row_of(out, slot, dim), row_of(grads, none ? i : bag, dim), dim,
                            end - first, s.combiner);
    }
  }
  check_hbm("scatter_add output", s.dst, u * dim);
  m_core->hbm.write_block(s.dst, reinterpret_cast<const uint32_t*>(out.data()), u * dim);
  const int64_t ops = n * dim * (s.combiner == Combiner::Mean ? 2 : 1);
  m_stats.element_ops += ops;
  m_stats.bags += s.in.bags;
  ++m_stats.scatter_adds;
  const int64_t meta =
      s.dense ? stream_bytes({4 * n, 4 * (s.in.bags + 1), 4 * in_rows * dim}, false)
              : stream_bytes({4 * n, 4 * (s.in.bags + 1), 4 * n, 4, 4 * in_rows * dim}, false);
  const int64_t body = std::max(front(n), simd(ops));
  return start + meta + body + stream_bytes({4 * u * dim}, true);
}

int64_t SparseCore::update(const SparseUpdate& up, int64_t start) {
  const size_t ti = static_cast<size_t>(up.table);
  const SparseTable& t = m_tables[ti];
  const int64_t dim = t.dim;
  const int64_t u = read_count(up.count);
  check_hbm("update ids", up.ids, u);
  check_hbm("update gradients", up.src, u * dim);
  std::vector<uint32_t> ids(static_cast<size_t>(u));
  m_core->hbm.read_block(up.ids, ids.data(), u);
  std::vector<float> grads(static_cast<size_t>(u * dim));
  m_core->hbm.read_block(up.src, reinterpret_cast<uint32_t*>(grads.data()), u * dim);
  m_stats.ids += u;
  const bool adagrad = up.optimizer == SparseOptimizer::Adagrad;
  if (adagrad) check_hbm("update accumulators", up.state, t.rows * dim);
  float clr = 0;
  if (adagrad) clr = numerics::adagrad_step_lr(up.lr, up.lr_decay, ++m_steps[ti]);
  std::vector<float> p(static_cast<size_t>(dim)), acc(static_cast<size_t>(dim));
  auto* pw = reinterpret_cast<uint32_t*>(p.data());
  auto* sw = reinterpret_cast<uint32_t*>(acc.data());
  for (int64_t k = 0; k < u; ++k) {
    const uint32_t id = ids[static_cast<size_t>(k)];
    check_id(t, id, k);
    const int64_t at = t.base + id * dim;
    m_core->hbm.read_block(at, pw, dim);
    if (adagrad) {
      const int64_t sat = up.state + id * dim;
      m_core->hbm.read_block(sat, sw, dim);
      numerics::sparse_adagrad_row(p.data(), acc.data(), row_of(grads, k, dim), dim, clr, up.eps);
      m_core->hbm.write_block(sat, sw, dim);
    } else {
      numerics::sparse_sgd_row(p.data(), row_of(grads, k, dim), dim, static_cast<float>(up.lr));
    }
    m_core->hbm.write_block(at, pw, dim);
  }
  const int64_t a = adagrad ? 2 : 1;
  const int64_t ops = u * dim * (adagrad ? 7 : 2);
  m_stats.element_ops += ops;
  ++m_stats.updates;
  const int64_t meta = stream_bytes({4 * u, 4, 4 * u * dim}, false);
  const int64_t body = std::max({row_stream(t, u * a, false), front(u), simd(ops)});
  return start + meta + body + row_stream(t, u * a, true);
}

int64_t SparseCore::wait(const SparseWait& w, int64_t start) {
  const auto f = static_cast<size_t>(w.flag);
  m_incoming.retire(start, m_own);
  int64_t done = start;
  if (m_own[f] < w.count) {
    const int64_t at = m_incoming.flag_ready(w.flag, m_own[f], w.count);
    if (at < 0)
      fault(
          fmt::format("wait on sparse-core flag {} for {} can never finish: the flag is {} and "
                      "no pending signal brings it there",
                      w.flag, w.count, m_own[f]));
    m_incoming.retire(at, m_own);
    done = std::max(start, at);
    m_stats.wait_cycles += done - start;
  }
  m_own[f] -= static_cast<uint32_t>(w.count);
  ++m_stats.waits;
  return done;
}

int64_t SparseCore::execute(const SparseDescriptor& d, int64_t start) {
  const int64_t t = start + m_spec.descriptor_cycles;
  return std::visit(Overloaded{
                        [&](const SparseGather& g) { return gather(g, t); },
                        [&](const SparseDedup& x) { return dedup(x, t); },
                        [&](const SparseScatterAdd& s) { return scatter_add(s, t); },
                        [&](const SparseUpdate& u) { return update(u, t); },
                        [&](const SparseWait& w) { return wait(w, t); },
                    },
                    d.op);
}

int64_t SparseCore::run(ArchState& core, int64_t start) {
  m_core = &core;
  int64_t t = std::max(start, m_free);
  try {
    for (m_pc = 0; m_pc < queued(); ++m_pc) {
      const SparseDescriptor& d = m_queue[static_cast<size_t>(m_pc)];
      m_at = t;
      const int64_t done = execute(d, t);
      ++m_stats.descriptors;
      m_stats.busy_cycles += done - t;
      if (d.signal >= 0) {
        m_owed.add(d.signal, done);
        ++m_stats.flags_signalled;
      }
      t = done;
    }
  } catch (...) {
    m_queue.clear();
    throw;
  }
  m_queue.clear();
  m_free = t;
  return t;
}

}  // namespace tessera::core
