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
  std::vector<int> param_grads, bag_grads;  // the gradient values, training programs only
};

namespace {

// The gradient value of parameter `value` in t.
int grad_of(const graph::TrainingGraph& t, int value) {
  const auto i = std::find(t.params.begin(), t.params.end(), value) - t.params.begin();
  return t.grads[static_cast<size_t>(i)];
}

}  // namespace

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
    for (int v : p->m.bags) p->bag_grads.push_back(grad_of(p->t, v));
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
  for (size_t t = 0; t < pooled.size(); ++t) ex.set(p.m.bags[t], pooled[t]);
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
  for (int v : p.bag_grads) g.bags.push_back(p.ex->get(v));
  return g;
}

}  // namespace tessera::runtime
