// A DLRM-style recommendation model's dense part as a graph (docs/sparse-core.md, "DLRM"):
//   z      = bottom MLP(dense features x [n, F])                  [n, D]  (ReLU after every layer)
//   e_t    = the pooled bag of table t (embedding_bag, sum)       [n, D]  t = 1..T (the tables
//                                                                         are the caller's)
//   dots   = v_i . v_j for 0 <= i < j <= T, v_0 = z, v_t = e_t    [n, T (T + 1) / 2], (i, j) in
//                                                                         lexicographic order
//   logit  = top MLP([z, dots])                                   [n, 1]  (ReLU after every
//                                                                         hidden layer, the last
//                                                                         linear)
//   loss   = binary cross-entropy with logits, mean over the batch:
//            max(logit, 0) - logit y + log(1 + e^-|logit|)
// As graph ops: each layer is the zoo's linear layer x W + b (W [in, out] row-major) and relu;
// for the dots, z (as [1, n, D]) and the bags [T, n, D] are concatenated and transposed into
// v [n D, T + 1] (row s D + d: element d of sample s's T + 1 vectors), two matmuls with constant
// one-hot matrices [T + 1, T (T + 1) / 2] pick the columns i and j of every pair (exact in fp32),
// the two are multiplied element-wise into [n, D, pairs] and sum_to adds them up over D; so the
// matrix unit sees two GEMMs of n D rows (not n tiny per-sample products) and the vector unit one
// product and one sum per element. The loss is
// softmax_cross_entropy of [0, logit] against the label y, which is exactly the BCE above
// (log(1 + e^logit) - y logit). Gradients come from autodiff.
//
// Parameters: U(-1/sqrt(in), 1/sqrt(in)) for W and b, drawn in layer order (bottom first, W before
// b, row-major) from SplitMix64(seed)'s unit53() (dlrm_init); the tables: dlrm_table_value.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/model.h"

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

// The dense part for `batch` samples. Graph values: input "x" [n, F], i32 input "labels" [n];
// parameters in graph order: "bottom<j>.w" [in, out] and "bottom<j>.b" [out] per bottom layer,
// the same for "top<j>", then "bags" [T, n, D] (table t's pooled bags at [t]: each table's n x D
// result contiguous, as a lookup writes it). The bags are a graph parameter only so that autodiff
// gives their gradient (which goes back to the tables' rows): they are bound for every run and not
// trained. model.params lists the dense parameters only, the graph's first ones
// (fan_in: the layer's in),
// model.logits is "logit" [n, 1], model.loss "loss". With loss_scale != 1 the loss is the mean
// BCE times loss_scale (a scale node; a processor's share of n of a global batch of N uses n / N,
// so that its gradients add up to the global mean's). Throws Error "model 'dlrm'" for sizes < 1.
struct DlrmModel {
  Model model;
  int bags = -1;
};
DlrmModel build_dlrm(const DlrmSpec& spec, int batch, double loss_scale = 1);

// The dense parameters' initial values, in model.params order.
std::vector<std::vector<float>> dlrm_init(const DlrmSpec& spec, uint64_t seed);

}  // namespace tessera::graph
