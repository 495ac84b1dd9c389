#include "runtime/dlrm_dense_step.h"

#include <algorithm>
#include <cstdint>

#include "graph/autodiff.h"
#include "graph/executor.h"

namespace tessera::runtime {

struct DlrmDenseStep::Program {
  graph::DlrmModel m;
  graph::TrainingGraph t;  // training programs only
  std::unique_ptr<graph::Executor<float>> ex;
  std::vector<int> param_grads;  // the gradient values, training programs only
  int bag_grads = -1;
};

namespace {

// The gradient value of parameter `value` in t.
int grad_of(const graph::TrainingGraph& t, int value) {
  const auto i = std::find(t.params.begin(), t.params.end(), value) - t.params.begin();
  return t.grads[static_cast<size_t>(i)];
}

}  // namespace

std::vector<float> dlrm_bags(const DlrmPooled& pooled) {
  std::vector<float> all;
  for (const std::vector<float>& t : pooled) all.insert(all.end(), t.begin(), t.end());
  return all;
}

std::vector<std::vector<float>> dlrm_split_bags(const std::vector<float>& bags, int tables) {
  const auto each = static_cast<int64_t>(bags.size()) / tables;
  std::vector<std::vector<float>> out;
  for (int t = 0; t < tables; ++t)
    out.emplace_back(bags.begin() + t * each, bags.begin() + (t + 1) * each);
  return out;
}

DlrmDenseStep::DlrmDenseStep(const graph::DlrmSpec& spec) : m_spec(spec) {}
DlrmDenseStep::~DlrmDenseStep() = default;
DlrmDenseStep::DlrmDenseStep(DlrmDenseStep&&) noexcept = default;

DlrmDenseStep::Program& DlrmDenseStep::program(int n, int global, bool training) {
  std::unique_ptr<Program>& slot = m_programs[{n, training ? global : n, training}];
  if (slot) return *slot;
  auto p = std::make_unique<Program>();
  p->m = graph::build_dlrm(m_spec, n, training ? static_cast<double>(n) / global : 1.0);
  const graph::Graph* g = &p->m.model.graph;
  if (training) {
    p->t = graph::build_training_graph(p->m.model.graph, p->m.model.loss);
    for (int v : p->m.model.params) p->param_grads.push_back(grad_of(p->t, v));
    p->bag_grads = grad_of(p->t, p->m.bags);
    g = &p->t.graph;
  }
  p->ex = std::make_unique<graph::Executor<float>>(*g, graph::Numerics::kF32);
  slot = std::move(p);
  return *slot;
}

DlrmDenseStep::Program& DlrmDenseStep::run(const DlrmParams& params, const DlrmBatch& b,
                                           const DlrmPooled& pooled, int global, bool training) {
  Program& p = program(b.n, global, training);
  graph::Executor<float>& ex = *p.ex;
  for (size_t i = 0; i < params.size(); ++i) ex.set(p.m.model.params[i], params[i]);
  ex.set(p.m.bags, dlrm_bags(pooled));
  ex.set(p.m.model.input, b.dense);
  std::vector<int32_t> labels(b.labels.size());
  std::transform(b.labels.begin(), b.labels.end(), labels.begin(),
                 [](float y) { return static_cast<int32_t>(y); });
  ex.set_labels(p.m.model.labels, std::move(labels));
  ex.run();
  return p;
}

std::vector<float> DlrmDenseStep::forward(const DlrmParams& params, const DlrmBatch& b,
                                          const DlrmPooled& pooled) {
  const Program& p = run(params, b, pooled, b.n, false);
  return p.ex->get(p.m.model.logits);
}

DlrmDenseGrads DlrmDenseStep::backward(const DlrmParams& params, const DlrmBatch& b,
                                       const DlrmPooled& pooled, int global) {
  const Program& p = run(params, b, pooled, global, true);
  DlrmDenseGrads g;
  g.logits = p.ex->get(p.m.model.logits);
  for (int v : p.param_grads) g.dense.push_back(p.ex->get(v));
  g.bags = dlrm_split_bags(p.ex->get(p.bag_grads), m_spec.tables);
  return g;
}

}  // namespace tessera::runtime
