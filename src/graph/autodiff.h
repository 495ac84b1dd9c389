// Reverse-mode automatic differentiation on the graph IR.
//
// Algorithm: walk the nodes in reverse creation order; for every node whose output has a gradient
// and some input that (transitively) depends on a parameter, apply the op's rule (autodiff.cpp:
// one switch, one case per op) which appends backward nodes to the same graph. Gradients of a
// value used several times are summed with Add in the order the uses are visited (reverse node
// order). Inputs that do not depend on a parameter (images, labels) get no gradient, so e.g. the
// first convolution has no input-gradient node.
//
// The optimizer update is NOT part of the graph: it is a host-side routine (optimizer.h) whose
// per-element arithmetic is defined in numerics/optimizer.h; the compiler lowers that same
// arithmetic after the training graph. See docs/models.md.
#pragma once

#include <vector>

#include "graph/graph.h"

namespace tessera::graph {

// Appends the backward pass of `output`, seeded with the gradient value `seed` (same shape),
// to `g`. Returns the gradient value of each parameter in g.params() order (-1 when `output`
// does not depend on that parameter). Throws Error for a backward-only op on the path.
std::vector<int> append_backward(Graph& g, int output, int seed);

// Forward + loss + backward in one graph.
struct TrainingGraph {
  Graph graph;
  int loss = -1;
  std::vector<int> params;  // parameter values, graph order
  std::vector<int> grads;   // grads[i] is the gradient of params[i]
};

// Copies `forward`, seeds d(loss)/d(loss) = ones_like(loss) (value "d.loss") and appends the
// backward pass. `loss` must be a scalar. Every parameter must affect the loss.
TrainingGraph build_training_graph(const Graph& forward, int loss);

}  // namespace tessera::graph
