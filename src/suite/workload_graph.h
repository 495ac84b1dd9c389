// The graph of a suite row: the computation as the graph IR states it, which the fp32 reference
// executor and the chip-numerics host reference run, and from which the row's program and its
// roofline figures are derived. Inputs are the graph's inputs (gemm: "a", "b"; conv: "x", "w";
// layernorm: "x", "y.gain", "y.bias"; softmax: "x"; attention: "q", "k", "v"; bert: "x" and each
// layer's weights; resnet: "x", its weights are graph constants), the row's result is the output
// of its last node.
#pragma once

#include <optional>
#include <string>

#include "graph/graph.h"
#include "suite/bound.h"
#include "suite/row.h"

namespace tessera::suite {

// Why the row cannot run on the simulated core yet (what the compiler lacks), or nullopt.
std::optional<std::string> unsupported_reason(const Row& row);

// The row's graph; Error for a row unsupported_reason refuses.
graph::Graph row_graph(const Row& row);

// The row's intrinsic work (suite/bound.h): MACs of its matmul, batch_matmul and conv2d nodes;
// 4 bytes per element of every graph input and constant (the weights) and of the result; the
// element operations that are not MACs, per output element: add, relu, scale 1; layer_norm 7
// (sum, subtract the mean, square, sum, normalise, gain, bias) and 4 per row (mean, variance,
// + eps, rsqrt); softmax 5 (max, subtract, exp, sum, multiply) and 1 per row (the reciprocal);
// maxpool2d kernel^2 (the window's comparisons); sum_to 1 per input element; reshape, permute
// and pad none.
// Error naming an op it has no figures for.
Workload graph_workload(const graph::Graph& g);

}  // namespace tessera::suite
