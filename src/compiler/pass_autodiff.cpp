// Pass autodiff: builds the graph the program computes. Training: the model's forward graph plus
// graph::build_training_graph's backward pass (d.loss = ones_like(loss), one rule per op); the
// optimizer update is not a graph op (it is lowered after the graph by pass_lower, per
// parameter). Inference: the forward graph (logits, and the loss when the model has one).
// Records the ids of the values the host exchanges with the chip (-1: labels and loss of an
// inference-only model), and the model's state values with their updates (training only).
#include "common/error.h"
#include "compiler/pipeline.h"

namespace tessera::compiler {

void pass_autodiff(Pipeline& p) {
  const graph::Model& m = p.model;
  if (p.options.training) {
    if (m.loss < 0 || m.labels < 0)
      throw Error("compile",
                  "model '" + m.name + "' has no loss: training needs labels and a loss");
    graph::TrainingGraph t = graph::build_training_graph(m.graph, m.loss);
    p.graph = std::move(t.graph);
    p.loss = t.loss;
    p.params = t.params;
    p.grads = t.grads;
  } else {
    p.graph = m.graph;
    p.loss = m.loss;
    p.params = m.params;
  }
  p.graph.verify();
  p.x = p.graph.find_value(m.graph.value(m.input).name);
  p.labels = m.labels < 0 ? -1 : p.graph.find_value(m.graph.value(m.labels).name);
  p.logits = p.graph.find_value(m.graph.value(m.logits).name);
  p.state.clear();
  p.state_updates.clear();
  for (const graph::Model::State& s : m.state) {
    p.state.push_back(p.graph.find_value(m.graph.value(s.value).name));
    p.state_updates.push_back(s.update >= 0 && p.options.training
                                  ? p.graph.find_value(m.graph.value(s.update).name)
                                  : -1);
  }
  for (size_t i = 0; i < m.params.size(); ++i)
    TESSERA_CHECK(p.graph.value(p.params[i]).name == m.graph.value(m.params[i]).name,
                  "autodiff: parameter order differs from the model's");
}

}  // namespace tessera::compiler
