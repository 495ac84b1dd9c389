// DlrmShardedTrainer (runtime/dlrm_train.h): the tables on the sparse cores of a system's
// processors, the dense part data-parallel with its gradients all-reduced over the same fabric.
#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"
#include "runtime/binary_metrics.h"
#include "runtime/dlrm_train.h"

namespace tessera::runtime {

namespace {

size_t at(int64_t i) {
  return static_cast<size_t>(i);
}

std::vector<system::ShardedTable> table_list(const graph::DlrmSpec& m) {
  std::vector<system::ShardedTable> t;
  for (int i = 0; i < m.tables; ++i) t.push_back({fmt::format("table{}", i), m.rows, m.dim});
  return t;
}

}  // namespace

DlrmShardedTrainer::DlrmShardedTrainer(const DlrmRecipe& r, const core::CoreSpec& core,
                                       const system::SystemSpec& system,
                                       system::ShardPlacement placement, ThreadPool* pool,
                                       RankGroup* ranks, DlrmDenseOn dense)
    : m_r(r),
      m_P(system.processors()),
      m_pool(pool != nullptr ? pool : &m_serial),
      m_dense(graph::dlrm_init(r.model, r.seed)),
      m_opt(dlrm_dense_optimizer(r, m_dense)) {
  for (int p = 0; p < m_P; ++p) m_steps.emplace_back(r.model);
  if (dense == DlrmDenseOn::kTensorCore)
    m_chip = std::make_unique<DlrmChipDense>(r.model, core, m_P);
  if (r.batch < m_P)
    throw UsageError("--batch",
                     fmt::format("{}: fewer samples than the {} processors", r.batch, m_P));
  system::ShardedOptimizer opt;
  opt.kind = core::SparseOptimizer::Adagrad;
  opt.lr = r.lr;
  opt.eps = r.eps;
  const graph::DlrmSpec spec = r.model;
  const uint64_t seed = r.seed;
  m_tables = std::make_unique<system::ShardedTables>(
      core, system, system::ShardMap(placement, m_P), table_list(r.model),
      [spec, seed](int t, int64_t row, int64_t col) {
        return graph::dlrm_table_value(spec, seed, t, row, col);
      },
      opt, m_pool, ranks);
}

std::pair<int, int> DlrmShardedTrainer::shard(int n, int p) const {
  const int q = n / m_P, r = n % m_P;
  return {p * q + std::min(p, r), q + (p < r ? 1 : 0)};
}

std::vector<std::vector<system::LookupBags>> DlrmShardedTrainer::bags(const DlrmBatch& b) const {
  const int L = m_r.data.bag;
  std::vector<std::vector<system::LookupBags>> out(at(m_P));
  for (int p = 0; p < m_P; ++p) {
    const auto [first, count] = shard(b.n, p);
    for (int t = 0; t < m_r.model.tables; ++t) {
      system::LookupBags g;
      for (int i = 0; i <= count; ++i) g.offsets.push_back(static_cast<uint32_t>(i * L));
      const auto from = b.ids[at(t)].begin() + int64_t{first} * L;
      g.ids.assign(from, from + int64_t{count} * L);
      out[at(p)].push_back(std::move(g));
    }
  }
  return out;
}

DlrmBatch DlrmShardedTrainer::slice(const DlrmBatch& b, int p) const {
  const auto [first, count] = shard(b.n, p);
  const int F = m_r.model.dense;
  DlrmBatch s;
  s.n = count;
  s.dense.assign(b.dense.begin() + int64_t{first} * F,
                 b.dense.begin() + int64_t{first + count} * F);
  s.labels.assign(b.labels.begin() + first, b.labels.begin() + first + count);
  return s;
}

double DlrmShardedTrainer::step(const DlrmBatch& b) {
  const auto B = bags(b);
  const system::ShardedLookupResult l = m_tables->lookup(B, numerics::Combiner::Sum, m_now);
  std::vector<double> losses(at(m_P));
  std::vector<std::vector<std::vector<float>>> dpooled(at(m_P));
  std::vector<std::vector<float>> flat(at(m_P));
  std::vector<int64_t> tensor(at(m_P), 0);
  if (m_chip)
    for (int p = 0; p < m_P; ++p) m_chip->prepare(shard(b.n, p).second);
  m_pool->run(m_P, [&](int p) {
    const DlrmBatch s = slice(b, p);
    DlrmDenseGrads g;
    if (m_chip) {
      DlrmChipDenseRun run = m_chip->step(p, m_dense, s, l.pooled[at(p)], b.n);
      losses[at(p)] = run.loss * s.n;
      tensor[at(p)] = run.cycles;
      g = std::move(run.grads);
    } else {
      g = m_steps[at(p)].backward(m_dense, s, l.pooled[at(p)], b.n);
      losses[at(p)] = binary_log_loss(g.logits, s.labels) * s.n;
    }
    dpooled[at(p)] = std::move(g.bags);
    for (const std::vector<float>& d : g.dense)
      flat[at(p)].insert(flat[at(p)].end(), d.begin(), d.end());
  });
  const int64_t stepped = l.cycles + *std::max_element(tensor.begin(), tensor.end());
  const system::ShardedBackwardResult g = m_tables->backward(dpooled, stepped);
  const system::DenseAllReduceResult a = m_tables->all_reduce(flat, g.cycles);
  DlrmParams sum;
  auto from = flat[0].begin();
  for (const std::vector<float>& d : m_dense) {
    sum.emplace_back(from, from + static_cast<int64_t>(d.size()));
    from += static_cast<int64_t>(d.size());
  }
  dlrm_dense_update(m_opt, m_dense, sum);
  DlrmShardFigures& f = m_fig;
  ++f.steps;
  f.cycles += a.cycles - m_now;
  f.lookup_cycles += l.cycles - m_now;
  f.tensor_cycles += stepped - l.cycles;
  f.backward_cycles += g.cycles - stepped;
  f.allreduce_cycles += a.cycles - g.cycles;
  f.id_bytes += l.id_bytes;
  f.row_bytes += l.row_bytes;
  f.grad_bytes += g.grad_bytes;
  f.dense_bytes += a.bytes;
  f.packets += l.packets + g.packets + a.packets;
  f.busiest_link_bytes += l.busiest_link_id_bytes + l.busiest_link_row_bytes +
                          g.busiest_link_grad_bytes + a.busiest_link_bytes;
  f.rows_updated += g.rows_updated;
  m_now = a.cycles;
  double loss = 0;
  for (double x : losses) loss += x;
  return loss / b.n;
}

std::vector<float> DlrmShardedTrainer::predict(const DlrmBatch& b) {
  const system::ShardedLookupResult l = m_tables->lookup(bags(b), numerics::Combiner::Sum, 0);
  std::vector<std::vector<float>> logits(at(m_P));
  m_pool->run(m_P, [&](int p) {
    const DlrmBatch s = slice(b, p);
    logits[at(p)] = m_steps[at(p)].forward(m_dense, s, l.pooled[at(p)]);
  });
  std::vector<float> out;
  for (const auto& z : logits) out.insert(out.end(), z.begin(), z.end());
  return out;
}

}  // namespace tessera::runtime
