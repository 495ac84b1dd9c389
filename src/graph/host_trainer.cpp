#include "graph/host_trainer.h"

#include "common/error.h"

namespace tessera::graph {

namespace {

std::vector<int64_t> param_sizes(const Model& m) {
  std::vector<int64_t> sizes;
  for (int p : m.params) sizes.push_back(num_elements(m.graph.value(p).shape));
  return sizes;
}

}  // namespace

struct HostTrainer::Program {
  Model model;
  TrainingGraph training;  // used when training
  std::unique_ptr<Executor<float>> exec;
};

HostTrainer::HostTrainer(const ModelSpec& spec, int batch, Numerics mode,
                         const OptimizerConfig& opt, uint64_t seed, bool use_blas)
    : HostTrainer([spec](int n) { return build_model(spec, n); },
                  init_params(build_model(spec, batch), seed), batch, mode, opt, use_blas) {}

HostTrainer::HostTrainer(std::function<Model(int batch)> build,
                         std::vector<std::vector<float>> params, int batch, Numerics mode,
                         const OptimizerConfig& opt, bool use_blas)
    : m_build(std::move(build)),
      m_mode(mode),
      m_use_blas(use_blas),
      m_model(m_build(batch)),
      m_params(std::move(params)),
      m_optimizer(opt, param_sizes(m_model)) {
  if (mode == Numerics::kF64) throw Error("host trainer", "runs f32 or chip numerics, not f64");
  if (m_params.size() != m_model.params.size())
    throw Error("host trainer", "parameter count differs from the model's");
}

HostTrainer::~HostTrainer() = default;

void HostTrainer::keep_state(std::vector<std::vector<float>> initial,
                             std::function<Model(int)> build_eval) {
  if (initial.size() != m_model.state.size())
    throw Error("host trainer", "state count differs from the model's");
  m_state = std::move(initial);
  m_build_eval = std::move(build_eval);
  m_programs.clear();
}

int64_t HostTrainer::sample_size() const {
  return num_elements(m_model.graph.value(m_model.input).shape) / m_model.batch;
}

HostTrainer::Program& HostTrainer::program(int n, bool training) {
  auto& slot = m_programs[{n, training}];
  if (!slot) {
    slot = std::make_unique<Program>();
    slot->model = !training && m_build_eval ? m_build_eval(n) : m_build(n);
    if (slot->model.state.size() != m_state.size())
      throw Error("host trainer", "model '" + slot->model.name + "' has " +
                                      std::to_string(slot->model.state.size()) +
                                      " state values, the trainer keeps " +
                                      std::to_string(m_state.size()));
    const Graph* g = &slot->model.graph;
    if (training) {
      slot->training = build_training_graph(slot->model.graph, slot->model.loss);
      g = &slot->training.graph;
    }
    slot->exec = std::make_unique<Executor<float>>(*g, m_mode, m_use_blas);
  }
  Program& p = *slot;
  for (size_t i = 0; i < m_params.size(); ++i) p.exec->set(p.model.params[i], m_params[i]);
  for (size_t i = 0; i < m_state.size(); ++i) p.exec->set(p.model.state[i].value, m_state[i]);
  return p;
}

void HostTrainer::bind(Program& p, const void* x, const int32_t* labels, int n) {
  const int64_t values = n * sample_size();
  if (p.model.graph.value(p.model.input).dtype == DType::kI32) {
    const auto* ids = static_cast<const int32_t*>(x);
    p.exec->set_labels(p.model.input, std::vector<int32_t>(ids, ids + values));
  } else {
    const auto* images = static_cast<const float*>(x);
    p.exec->set(p.model.input, std::vector<float>(images, images + values));
  }
  const int64_t label_values = num_elements(p.model.graph.value(p.model.labels).shape);
  p.exec->set_labels(p.model.labels, std::vector<int32_t>(labels, labels + label_values));
}

float HostTrainer::step(const float* images, const int32_t* labels, int n) {
  return train(images, labels, n);
}

float HostTrainer::step(const int32_t* ids, const int32_t* labels, int n) {
  return train(ids, labels, n);
}

void HostTrainer::evaluate(const float* images, const int32_t* labels, int n, EvalResult& acc) {
  infer(images, labels, n, acc);
}

void HostTrainer::evaluate(const int32_t* ids, const int32_t* labels, int n, EvalResult& acc) {
  infer(ids, labels, n, acc);
}

float HostTrainer::train(const void* x, const int32_t* labels, int n) {
  Program& p = program(n, true);
  bind(p, x, labels, n);
  p.exec->run();
  std::vector<float*> params;
  std::vector<const float*> grads;
  for (size_t i = 0; i < m_params.size(); ++i) {
    params.push_back(m_params[i].data());
    grads.push_back(p.exec->get(p.training.grads[i]).data());
  }
  const float loss = p.exec->get(p.model.loss)[0];
  m_optimizer.step(params, grads);
  for (size_t i = 0; i < m_state.size(); ++i)
    if (p.model.state[i].update >= 0) m_state[i] = p.exec->get(p.model.state[i].update);
  return loss;
}

void HostTrainer::infer(const void* x, const int32_t* labels, int n, EvalResult& acc) {
  Program& p = program(n, false);
  bind(p, x, labels, n);
  p.exec->run();
  const std::vector<float>& logits = p.exec->get(p.model.logits);
  const Shape& shape = p.model.graph.value(p.model.logits).shape;
  const int64_t rows = shape[0], classes = shape[1];
  for (int64_t r = 0; r < rows; ++r) {
    int64_t best = 0;
    for (int64_t c = 1; c < classes; ++c)
      if (logits[r * classes + c] > logits[r * classes + best]) best = c;
    acc.correct += best == labels[r];
  }
  acc.loss_sum += static_cast<double>(p.exec->get(p.model.loss)[0]) * n;
  acc.predictions += rows;
  acc.samples += n;
}

}  // namespace tessera::graph
