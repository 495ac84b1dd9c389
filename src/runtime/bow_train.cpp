#include "runtime/bow_train.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <map>

#include "common/error.h"
#include "graph/autodiff.h"
#include "graph/executor.h"
#include "numerics/sparse_optimizer.h"
#include "runtime/dataset.h"

namespace tessera::runtime {

std::vector<std::vector<float>> bow_dense_init(const BowRecipe& recipe) {
  // init_params of a one-row model (the table's draws come after them in the generator's stream
  // and are not used).
  graph::BowSpec one = recipe.model;
  one.rows = 1;
  std::vector<std::vector<float>> init =
      graph::init_params(graph::build_bow(one, 1, 1), recipe.seed);
  init.pop_back();
  return init;
}

int64_t bow_hits(std::span<const TopicSample* const> samples, const std::vector<float>& logits,
                 int classes) {
  const auto C = static_cast<size_t>(classes);
  int64_t right = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto row_begin = logits.begin() + static_cast<std::ptrdiff_t>(i * C);
    const auto best = std::max_element(row_begin, row_begin + static_cast<std::ptrdiff_t>(C));
    right += (best - row_begin) == samples[i]->label;
  }
  return right;
}

BowHostTrainer::BowHostTrainer(const BowRecipe& recipe, graph::Numerics mode)
    : m_r(recipe), m_mode(mode) {
  const std::vector<std::vector<float>> init = bow_dense_init(m_r);
  m_w = init[0];
  m_b = init[1];
  m_sw.assign(m_w.size(), 0.0f);
  m_sb.assign(m_b.size(), 0.0f);
}

BowHostTrainer::Row& BowHostTrainer::row(int32_t id) {
  auto [it, fresh] = m_rows.try_emplace(id);
  if (fresh) {
    it->second.p = graph::bow_table_row(m_r.model, m_r.seed, id);
    it->second.s.assign(it->second.p.size(), 0.0f);
  }
  return it->second;
}

const std::vector<float>& BowHostTrainer::table_row(int32_t id) {
  return row(id).p;
}

double BowHostTrainer::run(std::span<const TopicSample* const> batch, bool training,
                           std::vector<float>* logits) {
  // The batch's distinct ids, ascending, and every id's rank among them.
  std::map<int32_t, int32_t> rank;
  int64_t n = 0;
  for (const TopicSample* s : batch) {
    for (int32_t id : s->ids) rank.emplace(id, 0);
    n += static_cast<int64_t>(s->ids.size());
  }
  int32_t k = 0;
  for (auto& [id, r] : rank) r = k++;
  std::vector<int32_t> ids, offsets{0}, labels;
  for (const TopicSample* s : batch) {
    for (int32_t id : s->ids) ids.push_back(rank.at(id));
    offsets.push_back(static_cast<int32_t>(ids.size()));
    labels.push_back(s->label);
  }
  graph::BowSpec local = m_r.model;
  local.rows = static_cast<int64_t>(rank.size());
  const auto b = static_cast<int>(batch.size());
  const graph::Model m = graph::build_bow(local, b, n);
  const graph::TrainingGraph t = graph::build_training_graph(m.graph, m.loss);
  const graph::Graph& g = training ? t.graph : m.graph;
  graph::Executor<float> ex(g, m_mode);
  ex.set_labels(m.input, ids);
  ex.set_labels(graph::bow_offsets(m), offsets);
  ex.set_labels(m.labels, labels);
  ex.set(m.params[0], m_w);
  ex.set(m.params[1], m_b);
  std::vector<float> table;
  table.reserve(static_cast<size_t>(local.rows * local.dim));
  for (const auto& [id, r] : rank) {
    const std::vector<float>& p = row(id).p;
    table.insert(table.end(), p.begin(), p.end());
  }
  ex.set(m.params[2], std::move(table));
  ex.run();
  if (logits) *logits = ex.get(m.logits);
  const double loss = ex.get(training ? t.loss : m.loss)[0];
  if (!training) return loss;

  ++m_step;
  const float clr = numerics::adagrad_step_lr(m_r.lr, m_r.lr_decay, m_step);
  const std::vector<float>& gw = ex.get(t.grads[0]);
  const std::vector<float>& gb = ex.get(t.grads[1]);
  const std::vector<float>& gt = ex.get(t.grads[2]);
  numerics::sparse_adagrad_row(m_w.data(), m_sw.data(), gw.data(), static_cast<int64_t>(m_w.size()),
                               clr, m_r.eps);
  numerics::sparse_adagrad_row(m_b.data(), m_sb.data(), gb.data(), static_cast<int64_t>(m_b.size()),
                               clr, m_r.eps);
  const int64_t D = local.dim;
  for (const auto& [id, r] : rank) {
    Row& row_of_id = row(id);
    numerics::sparse_adagrad_row(row_of_id.p.data(), row_of_id.s.data(), gt.data() + r * D, D, clr,
                                 m_r.eps);
  }
  return loss;
}

double BowHostTrainer::step(std::span<const TopicSample* const> batch) {
  return run(batch, true, nullptr);
}

double BowHostTrainer::accuracy(std::span<const TopicSample> samples) {
  int64_t right = 0;
  std::vector<const TopicSample*> batch;
  std::vector<float> logits;
  for (size_t first = 0; first < samples.size(); first += kBowEvalBatch) {
    batch.clear();
    for (size_t i = first; i < std::min(samples.size(), first + kBowEvalBatch); ++i)
      batch.push_back(&samples[i]);
    run(batch, false, &logits);
    right += bow_hits(batch, logits, m_r.model.classes);
  }
  return samples.empty() ? 0 : static_cast<double>(right) / static_cast<double>(samples.size());
}

std::vector<BowEpoch> train_bow_host(const TopicCorpus& data, BowRecipe recipe,
                                     graph::Numerics mode,
                                     const std::function<void(const BowEpoch&)>& on_epoch) {
  recipe.model.classes = static_cast<int>(data.classes.size());
  BowHostTrainer t(recipe, mode);
  return train_bow(data, recipe, t, on_epoch);
}

nlohmann::ordered_json bow_position_json(const BowPosition& p) {
  nlohmann::ordered_json epochs = nlohmann::ordered_json::array();
  for (const BowEpoch& e : p.epochs)
    epochs.push_back({{"epoch", e.epoch},
                      {"steps", e.steps},
                      {"loss", e.loss},
                      {"test_accuracy", e.test_accuracy},
                      {"host_seconds", e.host_seconds}});
  return {{"epoch", p.epoch},
          {"step", p.step},
          {"loss_sum_bits", std::bit_cast<uint64_t>(p.loss_sum)},
          {"epochs", epochs}};
}

BowPosition bow_position(const nlohmann::ordered_json& j) {
  try {
    BowPosition p;
    p.epoch = j.at("epoch").get<int>();
    p.step = j.at("step").get<int64_t>();
    p.loss_sum = std::bit_cast<double>(j.at("loss_sum_bits").get<uint64_t>());
    for (const auto& e : j.at("epochs"))
      p.epochs.push_back({e.at("epoch").get<int>(), e.at("steps").get<int64_t>(),
                          e.at("loss").get<double>(), e.at("test_accuracy").get<double>(),
                          e.at("host_seconds").get<double>()});
    if (p.epoch < 0 || p.step < 0) throw Error("checkpoint", "a negative epoch or step");
    return p;
  } catch (const nlohmann::json::exception& e) {
    throw Error("checkpoint", std::string("malformed bow loop position (") + e.what() + ")");
  }
}

nlohmann::ordered_json bow_identity(const BowRecipe& r, const std::string& config,
                                    const std::string& config_hash) {
  return {{"batch", r.batch},
          {"model", "bow"},
          {"rows", r.model.rows},
          {"dim", r.model.dim},
          {"classes", r.model.classes},
          {"table_std", r.model.table_std},
          {"optimizer", "adagrad"},
          {"lr", r.lr},
          {"lr_decay", r.lr_decay},
          {"eps", r.eps},
          {"epochs", r.epochs},
          {"steps_limit", r.steps},
          {"seed", r.seed},
          {"config", config},
          {"config_hash", config_hash}};
}

std::vector<BowEpoch> train_bow(const TopicCorpus& data, const BowRecipe& recipe, BowTrainer& t,
                                const std::function<void(const BowEpoch&)>& on_epoch,
                                const BowPosition& from, const BowAfterStep& after_step) {
  BowPosition at = from;
  const auto n = static_cast<int64_t>(data.train.size());
  std::vector<const TopicSample*> batch;
  for (; at.epoch < recipe.epochs; ++at.epoch) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<int64_t> order = epoch_order(n, recipe.seed, at.epoch);
    for (int64_t first = at.step * recipe.batch;
         first < n && (recipe.steps <= 0 || at.step < recipe.steps); first += recipe.batch) {
      batch.clear();
      for (int64_t i = first; i < std::min(n, first + recipe.batch); ++i)
        batch.push_back(&data.train[static_cast<size_t>(order[static_cast<size_t>(i)])]);
      at.loss_sum += t.step(batch);
      ++at.step;
      if (after_step && !after_step(at, false)) return at.epochs;
    }
    const double accuracy = t.accuracy(data.test);
    const std::chrono::duration<double> host = std::chrono::steady_clock::now() - start;
    at.epochs.push_back({at.epoch + 1, at.step, at.loss_sum / static_cast<double>(at.step),
                         accuracy, host.count()});
    if (on_epoch) on_epoch(at.epochs.back());
    at.step = 0;
    at.loss_sum = 0;
    if (after_step) {
      BowPosition next = at;
      ++next.epoch;
      if (!after_step(next, true)) return at.epochs;
    }
  }
  return at.epochs;
}

}  // namespace tessera::runtime
