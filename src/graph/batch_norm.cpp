#include "graph/batch_norm.h"

#include <cmath>

#include "common/error.h"

namespace tessera::graph {

namespace {

int64_t channels(const Graph& g, int x) {
  return g.value(x).shape.back();
}

// x [..., C] as rows [R, C].
int as_rows(Graph& g, int x, const std::string& name) {
  const int64_t c = channels(g, x);
  return g.add_node(OpKind::kReshape, {x}, Attrs::reshape({num_elements(g.value(x).shape) / c, c}),
                    name + ".rows");
}

// A per-channel sum [C] over `rows` rows divided by their count: a mean over the batch.
int over_rows(Graph& g, int sum, int64_t rows, const std::string& name) {
  return g.add_node(OpKind::kScale, {sum}, Attrs::scaled(1.0 / static_cast<double>(rows)), name);
}

// The per-channel mean [C] of rows [R, C] (the sum in reduce_rows' order).
int channel_mean(Graph& g, int rows, const std::string& name) {
  return over_rows(g, g.add_node(OpKind::kReduceRows, {rows}, {}, name + ".sum"),
                   g.value(rows).shape[0], name);
}

// 1 / sqrt(var + eps) [C].
int inverse_sd(Graph& g, int var, double eps, const std::string& name) {
  const int64_t c = g.value(var).shape[0];
  const int eps_c = g.add_constant(
      name + ".eps", {c}, std::vector<float>(static_cast<size_t>(c), static_cast<float>(eps)));
  const int sd =
      g.add_node(OpKind::kSqrt, {g.add_node(OpKind::kAdd, {var, eps_c}, {}, name + ".var_eps")}, {},
                 name + ".sd");
  return g.add_node(OpKind::kReciprocal, {sd}, {}, name + ".inv_sd");
}

// gamma / sqrt(var + eps) [C].
int channel_scale(Graph& g, int gamma, int var, double eps, const std::string& name) {
  return g.add_node(OpKind::kMul, {inverse_sd(g, var, eps, name), gamma}, {}, name + ".scale");
}

}  // namespace

BatchStatistics batch_norm_training(Graph& g, int x, int gamma, int beta, double eps,
                                    const std::string& name) {
  const Shape shape = g.value(x).shape;
  const int rows = as_rows(g, x, name);
  BatchStatistics b;
  b.mean = channel_mean(g, rows, name + ".mean");
  b.var = over_rows(g, g.add_node(OpKind::kChannelSquares, {rows, b.mean}, {}, name + ".squares"),
                    g.value(rows).shape[0], name + ".var");
  const int y =
      g.add_node(OpKind::kBatchNorm, {rows, b.mean, inverse_sd(g, b.var, eps, name), gamma, beta},
                 {}, name + ".normalized");
  b.y = g.add_node(OpKind::kReshape, {y}, Attrs::reshape(shape), name);
  return b;
}

int batch_norm_inference(Graph& g, int x, int gamma, int beta, int running_mean, int running_var,
                         double eps, const std::string& name) {
  const int s = channel_scale(g, gamma, running_var, eps, name);
  const int shift = g.add_node(
      OpKind::kAdd,
      {beta, g.add_node(OpKind::kScale,
                        {g.add_node(OpKind::kMul, {running_mean, s}, {}, name + ".mean_scaled")},
                        Attrs::scaled(-1.0), name + ".neg_mean_scaled")},
      {}, name + ".shift");
  return g.add_node(OpKind::kAdd, {g.add_node(OpKind::kMul, {x, s}, {}, name + ".scaled"), shift},
                    {}, name);
}

RunningUpdate running_averages(Graph& g, const BatchStatistics& batch, int running_mean,
                               int running_var, double momentum) {
  const int64_t c = g.value(batch.mean).shape[0];
  const int64_t r = num_elements(g.value(batch.y).shape) / c;
  auto average = [&](int running, int value, double correction) {
    const std::string name = g.value(running).name;  // a copy: add_node may move the values
    return g.add_node(
        OpKind::kAdd,
        {g.add_node(OpKind::kScale, {running}, Attrs::scaled(1.0 - momentum), name + ".kept"),
         g.add_node(OpKind::kScale, {value}, Attrs::scaled(momentum * correction), name + ".new")},
        {}, name + ".next");
  };
  const double unbiased = r > 1 ? static_cast<double>(r) / static_cast<double>(r - 1) : 1.0;
  return {average(running_mean, batch.mean, 1.0), average(running_var, batch.var, unbiased)};
}

FoldedConv fold_batch_norm(const std::vector<float>& w, const std::vector<float>& gamma,
                           const std::vector<float>& beta, const std::vector<float>& running_mean,
                           const std::vector<float>& running_var, double eps) {
  const size_t c = gamma.size();
  if (beta.size() != c || running_mean.size() != c || running_var.size() != c || c == 0 ||
      w.size() % c != 0)
    throw Error("fold_batch_norm", "the statistics and the weights' output channels differ");
  std::vector<double> s(c);
  FoldedConv f{w, std::vector<float>(c)};
  for (size_t k = 0; k < c; ++k) {
    s[k] = gamma[k] / std::sqrt(static_cast<double>(running_var[k]) + static_cast<float>(eps));
    f.bias[k] = static_cast<float>(beta[k] - running_mean[k] * s[k]);
  }
  for (size_t i = 0; i < w.size(); ++i) f.w[i] = static_cast<float>(w[i] * s[i % c]);
  return f;
}

}  // namespace tessera::graph
