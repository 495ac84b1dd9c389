#include "runtime/dlrm_train.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"
#include "numerics/embedding_bag.h"
#include "numerics/sparse_optimizer.h"
#include "runtime/binary_metrics.h"

namespace tessera::runtime {

namespace {

size_t at(int64_t i) {
  return static_cast<size_t>(i);
}

}  // namespace

void dlrm_recipe_check(const DlrmRecipe& r) {
  if (r.batch < 1) throw UsageError("--batch", fmt::format("{}: must be >= 1", r.batch));
  if (r.steps < 1) throw UsageError("--steps", fmt::format("{}: must be >= 1", r.steps));
  if (r.test < 1) throw UsageError("--test", fmt::format("{}: must be >= 1", r.test));
  if (!(r.lr > 0)) throw UsageError("--lr", fmt::format("{}: must be positive", r.lr));
  const graph::DlrmSpec& m = r.model;
  if (m.tables != r.data.tables || m.rows != r.data.rows || m.dense != r.data.dense)
    throw UsageError("train",
                     "the DLRM model's tables, rows and dense features must be the data's");
  if (m.tables < 1 || m.rows < 1 || m.dim < 1 || m.dense < 1 || r.data.bag < 1)
    throw UsageError("train", fmt::format("--tables {} --rows {} --dim {} --bag {}: must be >= 1",
                                          m.tables, m.rows, m.dim, r.data.bag));
  if (m.rows > (int64_t{1} << 32))
    throw UsageError("--rows", fmt::format("{}: ids are 32-bit", m.rows));
}

graph::Optimizer dlrm_dense_optimizer(const DlrmRecipe& r, const DlrmParams& params) {
  graph::OptimizerConfig c;
  c.kind = graph::OptimizerKind::kAdagrad;
  c.lr = r.lr;
  c.eps = r.eps;
  std::vector<int64_t> sizes;
  for (const std::vector<float>& p : params) sizes.push_back(static_cast<int64_t>(p.size()));
  return graph::Optimizer(c, sizes);
}

void dlrm_dense_update(graph::Optimizer& opt, DlrmParams& params, const DlrmParams& grads) {
  std::vector<float*> p;
  std::vector<const float*> g;
  for (size_t i = 0; i < params.size(); ++i) {
    p.push_back(params[i].data());
    g.push_back(grads[i].data());
  }
  opt.step(p, g);
}

DlrmHostTrainer::DlrmHostTrainer(const DlrmRecipe& r)
    : m_r(r),
      m_dense(graph::dlrm_init(r.model, r.seed)),
      m_opt(dlrm_dense_optimizer(r, m_dense)),
      m_step(r.model) {}

float* DlrmHostTrainer::row(int t, uint32_t id) {
  const int64_t D = m_r.model.dim;
  const uint64_t key = static_cast<uint64_t>(t) << 32 | id;
  auto [it, fresh] = m_index.try_emplace(key, static_cast<int64_t>(m_index.size()));
  if (fresh) {
    for (int64_t c = 0; c < D; ++c)
      m_rows.push_back(graph::dlrm_table_value(m_r.model, m_r.seed, t, id, c));
    m_acc.resize(m_rows.size(), 0.0f);
  }
  return m_rows.data() + it->second * D;
}

std::vector<std::vector<float>> DlrmHostTrainer::pool(const DlrmBatch& b) {
  const int D = m_r.model.dim, L = m_r.data.bag;
  std::vector<std::vector<float>> pooled(at(m_r.model.tables));
  for (int t = 0; t < m_r.model.tables; ++t) {
    pooled[at(t)].assign(at(int64_t{b.n} * D), 0.0f);
    for (int i = 0; i < b.n; ++i)
      for (int j = 0; j < L; ++j)
        numerics::bag_accumulate(pooled[at(t)].data() + int64_t{i} * D,
                                 row(t, b.ids[at(t)][at(int64_t{i} * L + j)]), D);
  }
  return pooled;
}

double DlrmHostTrainer::step(const DlrmBatch& b) {
  const int D = m_r.model.dim, L = m_r.data.bag;
  DlrmDenseGrads g = m_step.backward(m_dense, b, pool(b), b.n);
  ++m_steps;
  const float clr = numerics::adagrad_step_lr(m_r.lr, 0, m_steps);
  for (int t = 0; t < m_r.model.tables; ++t) {
    std::vector<uint32_t> ids = b.ids[at(t)];
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    std::vector<float> rg(ids.size() * at(D), 0.0f);
    for (int i = 0; i < b.n; ++i)
      for (int j = 0; j < L; ++j) {
        const uint32_t id = b.ids[at(t)][at(int64_t{i} * L + j)];
        const auto k = std::lower_bound(ids.begin(), ids.end(), id) - ids.begin();
        numerics::bag_scatter(rg.data() + k * D, g.bags[at(t)].data() + int64_t{i} * D, D, L,
                              numerics::Combiner::Sum);
      }
    for (size_t k = 0; k < ids.size(); ++k) {
      float* p = row(t, ids[k]);
      numerics::sparse_adagrad_row(p, m_acc.data() + (p - m_rows.data()), rg.data() + k * at(D), D,
                                   clr, m_r.eps);
    }
  }
  dlrm_dense_update(m_opt, m_dense, g.dense);
  return binary_log_loss(g.logits, b.labels);
}

std::vector<float> DlrmHostTrainer::predict(const DlrmBatch& b) {
  return m_step.forward(m_dense, b, pool(b));
}

DlrmEval evaluate_dlrm(const DlrmRecipe& r, DlrmTrainer& trainer) {
  const DlrmData data(r.data);
  std::vector<float> logits, teacher, labels;
  for (int64_t first = 0; first < r.test; first += r.batch) {
    const int n = static_cast<int>(std::min<int64_t>(r.batch, r.test - first));
    const DlrmBatch b = data.batch(kDlrmTestFirst + first, n);
    const std::vector<float> z = trainer.predict(b);
    logits.insert(logits.end(), z.begin(), z.end());
    labels.insert(labels.end(), b.labels.begin(), b.labels.end());
    for (int i = 0; i < n; ++i) teacher.push_back(static_cast<float>(data.teacher_logit(b, i)));
  }
  return {binary_log_loss(logits, labels), binary_auc(logits, labels), binary_auc(teacher, labels)};
}

std::vector<double> train_dlrm(const DlrmRecipe& r, DlrmTrainer& trainer,
                               const std::function<void(int64_t, double)>& on_step) {
  const DlrmData data(r.data);
  std::vector<double> losses;
  for (int64_t s = 0; s < r.steps; ++s) {
    losses.push_back(trainer.step(data.batch(s * r.batch, r.batch)));
    if (on_step) on_step(s, losses.back());
  }
  return losses;
}

}  // namespace tessera::runtime
