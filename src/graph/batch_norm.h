// Batch normalisation over the channels (the last axis) of an NHWC activation x [..., C], built
// from graph ops so that autodiff, the host executors and the tensor-core lowering all apply.
//
// Per channel over the R = elements / C rows of x viewed as [R, C]:
//   training:   mean = sum(x) / R (reduce_rows), var = sum((x - mean)^2) / R (channel_squares:
//               the population variance; both sums in reduce_rows' order),
//               y = (x - mean) * (gamma * (1 / sqrt(var + eps))) + beta (the batch_norm op, whose
//               gradient rule is batch normalisation's whole backward pass: two passes over the
//               rows, channel_dot and batch_norm_grad);
//   inference:  y = x * s + t with s = gamma / sqrt(running_var + eps), t = beta - running_mean *
//   s; running averages (PyTorch's convention, momentum m = 0.1 by default):
//               running_mean' = running_mean * (1 - m) + mean * m,
//               running_var'  = running_var * (1 - m) + var * R / (R - 1) * m
//               (the unbiased variance; R = 1 keeps the population variance).
// gamma, beta, the running statistics and the results are graph values [C].
// fold_batch_norm gives the inference form folded into a convolution: weights w * s per output
// channel and the bias t, computed in double from the f32 values and rounded once.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"

namespace tessera::graph {

inline constexpr double kBatchNormEps = 1e-5;
inline constexpr double kBatchNormMomentum = 0.1;

struct BatchStatistics {
  int y = -1;     // x's shape
  int mean = -1;  // [C]
  int var = -1;   // [C], the population variance
};

// Nodes are named "<name>.<part>", y is "<name>".
BatchStatistics batch_norm_training(Graph& g, int x, int gamma, int beta, double eps,
                                    const std::string& name);
int batch_norm_inference(Graph& g, int x, int gamma, int beta, int running_mean, int running_var,
                         double eps, const std::string& name);

// The running averages after one training step, named "<running's name>.next".
struct RunningUpdate {
  int mean = -1;
  int var = -1;
};
RunningUpdate running_averages(Graph& g, const BatchStatistics& batch, int running_mean,
                               int running_var, double momentum);

// HWIO weights w [..., C] and the statistics [C] as one convolution with a bias.
struct FoldedConv {
  std::vector<float> w;
  std::vector<float> bias;
};
FoldedConv fold_batch_norm(const std::vector<float>& w, const std::vector<float>& gamma,
                           const std::vector<float>& beta, const std::vector<float>& running_mean,
                           const std::vector<float>& running_var, double eps);

}  // namespace tessera::graph
