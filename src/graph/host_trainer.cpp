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
    : m_spec(spec),
      m_mode(mode),
      m_use_blas(use_blas),
      m_model(build_model(spec, batch)),
      m_params(init_params(m_model, seed)),
      m_optimizer(opt, param_sizes(m_model)) {
  if (mode == Numerics::kF64) throw Error("host trainer", "runs f32 or chip numerics, not f64");
}

HostTrainer::~HostTrainer() = default;

int64_t HostTrainer::sample_size() const {
  return num_elements(m_model.graph.value(m_model.input).shape) / m_model.batch;
}

HostTrainer::Program& HostTrainer::program(int n, bool training) {
  auto& slot = m_programs[{n, training}];
  if (!slot) {
    slot = std::make_unique<Program>();
    slot->model = build_model(m_spec, n);
    const Graph* g = &slot->model.graph;
    if (training) {
      slot->training = build_training_graph(slot->model.graph, slot->model.loss);
      g = &slot->training.graph;
    }
    slot->exec = std::make_unique<Executor<float>>(*g, m_mode, m_use_blas);
  }
  Program& p = *slot;
  for (size_t i = 0; i < m_params.size(); ++i) p.exec->set(p.model.params[i], m_params[i]);
  return p;
}

float HostTrainer::step(const float* images, const int32_t* labels, int n) {
  Program& p = program(n, true);
  p.exec->set(p.model.input, std::vector<float>(images, images + n * sample_size()));
  p.exec->set_labels(p.model.labels, std::vector<int32_t>(labels, labels + n));
  p.exec->run();
  std::vector<float*> params;
  std::vector<const float*> grads;
  for (size_t i = 0; i < m_params.size(); ++i) {
    params.push_back(m_params[i].data());
    grads.push_back(p.exec->get(p.training.grads[i]).data());
  }
  const float loss = p.exec->get(p.model.loss)[0];
  m_optimizer.step(params, grads);
  return loss;
}

void HostTrainer::evaluate(const float* images, const int32_t* labels, int n, EvalResult& acc) {
  Program& p = program(n, false);
  p.exec->set(p.model.input, std::vector<float>(images, images + n * sample_size()));
  p.exec->set_labels(p.model.labels, std::vector<int32_t>(labels, labels + n));
  p.exec->run();
  const std::vector<float>& logits = p.exec->get(p.model.logits);
  const int classes = static_cast<int>(p.model.graph.value(p.model.logits).shape[1]);
  for (int b = 0; b < n; ++b) {
    int best = 0;
    for (int c = 1; c < classes; ++c)
      if (logits[b * classes + c] > logits[b * classes + best]) best = c;
    acc.correct += best == labels[b];
  }
  acc.loss_sum += static_cast<double>(p.exec->get(p.model.loss)[0]) * n;
  acc.samples += n;
}

}  // namespace tessera::graph
