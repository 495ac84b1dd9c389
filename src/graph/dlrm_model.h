// A DLRM-style recommendation model's dense part, in host fp32 (docs/sparse-core.md, "DLRM"):
//   z      = bottom MLP(dense features x [F])                     [D]  (ReLU after every layer)
//   e_t    = embedding_bag(ids of table t; sum)                   [D]  t = 1..T (the tables are
//                                                                      the caller's)
//   dots   = v_i . v_j for 0 <= i < j <= T, v_0 = z, v_t = e_t    [T (T + 1) / 2], (i, j) in
//                                                                      lexicographic order
//   logit  = top MLP([z, dots])                                   [1]  (ReLU after every hidden
//                                                                      layer, the last linear)
//   loss   = binary cross-entropy with logits, mean over the batch:
//            max(logit, 0) - logit y + log(1 + e^-|logit|)
// A layer is y = x W + b with W [in, out] row-major; its sums run over the inputs in order, in
// fp32. Parameters: U(-1/sqrt(in), 1/sqrt(in)) for W and b, drawn in layer order (bottom first,
// W before b, row-major) from SplitMix64(seed)'s unit53(); the tables: dlrm_table_value.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::graph {

struct DlrmSpec {
  int dense = 13;                   // F
  int tables = 8;                   // T
  int64_t rows = int64_t{1} << 18;  // per table
  int dim = 16;                     // D
  std::vector<int> bottom = {64};   // the bottom MLP's hidden widths (its output is D)
  std::vector<int> top = {64};      // the top MLP's hidden widths (its output is 1)
  double table_scale = 0.05;        // table elements ~ U(-scale, scale)
};

// Element (row, col) of table t: U(-table_scale, table_scale) from the first unit53() of
// SplitMix64(seed ^ mix(t, row, col)) (a pure function: sharded tables write rows lazily).
float dlrm_table_value(const DlrmSpec& spec, uint64_t seed, int t, int64_t row, int64_t col);

struct DlrmLayer {
  int in = 0, out = 0;
  std::vector<float> w, b;  // [in, out], [out]
};

// The dense parameters, and their gradients in the same shape.
struct DlrmDense {
  std::vector<DlrmLayer> bottom, top;
  int64_t size() const;  // parameter count
  // Every parameter in layer order (bottom first, w before b): the all-reduce's and the
  // optimizer's flat view.
  std::vector<float*> tensors();
  std::vector<int64_t> sizes() const;
};

DlrmDense dlrm_init(const DlrmSpec& spec, uint64_t seed);
DlrmDense dlrm_zeros_like(const DlrmDense& d);

// One batch of n samples through the dense part. x: n x F; pooled[t]: n x D (table t's bag sums).
class DlrmStep {
 public:
  explicit DlrmStep(const DlrmSpec& spec) : m_spec(spec) {}
  // The logits [n]; keeps what backward needs.
  const std::vector<float>& forward(const DlrmDense& p, const std::vector<float>& x,
                                    const std::vector<std::vector<float>>& pooled, int n);
  // The mean BCE loss over the batch's n samples of the last forward (labels 0 or 1), in double.
  double loss(const std::vector<float>& labels) const;
  // Backward of the last forward with dloss/dlogit_i = (sigmoid(logit_i) - y_i) * scale: adds
  // the parameter gradients to `grads` and returns d pooled[t] (n x D per table).
  std::vector<std::vector<float>> backward(const DlrmDense& p, const std::vector<float>& labels,
                                           float scale, DlrmDense& grads);

 private:
  DlrmSpec m_spec;
  int m_n = 0;
  // Activations: the input and output of every layer (after ReLU), per MLP.
  std::vector<std::vector<float>> m_bottom_act, m_top_act;
  std::vector<std::vector<float>> m_pooled;
  std::vector<float> m_logits;
};

}  // namespace tessera::graph
