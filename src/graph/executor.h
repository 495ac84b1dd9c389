// The host reference executor: runs any graph node by node (creation order) in fp64, fp32 or
// chip numerics (kernels.h). It is the oracle for the simulator and for gradient checks, not the
// product.
//
// Usage: bind every input and parameter once (set / set_labels), run(), read values with get().
// Constants are bound from the graph when the executor is made.
// Bound values persist across runs (parameters are updated in place through at()); node outputs
// are recomputed by each run. T is double for Numerics::kF64 and float otherwise.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "graph/kernels.h"

namespace tessera::graph {

template <typename T>
class Executor {
 public:
  // use_blas: fp32 matmuls through single-threaded OpenBLAS (kF32 only).
  Executor(const Graph& g, Numerics mode, bool use_blas = true);

  // Binds an f32 input or parameter; throws Error naming the value on a size mismatch.
  void set(int value, std::vector<T> data);
  // Binds an i32 input (labels).
  void set_labels(int value, std::vector<int32_t> labels);
  // Runs every node; throws Error naming an unbound input.
  void run();

  const std::vector<T>& get(int value) const;
  // A copy of an f32 value with its shape.
  HostTensor<T> tensor(int value) const { return {m_graph.value(value).shape, get(value)}; }
  std::vector<T>& at(int value);
  const Graph& graph() const { return m_graph; }
  Numerics numerics() const { return m_mode; }

 private:
  void run_node(const Node& n);
  // The ops of transformer_kernels.h (run_node's other cases are the MLP and CNN ops).
  void run_transformer_node(const Node& n);
  // The ops of elementwise_kernels.h.
  void run_elementwise_node(const Node& n);

  const Graph& m_graph;
  Numerics m_mode;
  kernels::Matmul m_matmul;
  std::vector<std::vector<T>> m_values;
  std::vector<std::vector<int32_t>> m_labels;
  std::vector<bool> m_bound;
};

extern template class Executor<float>;
extern template class Executor<double>;

}  // namespace tessera::graph
