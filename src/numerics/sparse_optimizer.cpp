#include "numerics/sparse_optimizer.h"

#include <cmath>

namespace tessera::numerics {

void sparse_sgd_row(float* p, const float* g, int64_t dim, float lr) {
  const float neg = -lr;
  for (int64_t i = 0; i < dim; ++i) p[i] += neg * g[i];
}

float adagrad_step_lr(double lr, double lr_decay, int64_t t) {
  return static_cast<float>(lr / (1.0 + static_cast<double>(t - 1) * lr_decay));
}

void adagrad_update(float* p, float* s, const float* g, int64_t n, float clr, float eps) {
  const float neg = -clr;
  for (int64_t i = 0; i < n; ++i) {
    s[i] += g[i] * g[i];
    const float std = std::sqrt(s[i]) + eps;
    p[i] += neg * (g[i] / std);
  }
}

void sparse_adagrad_row(float* p, float* s, const float* g, int64_t dim, float clr, float eps) {
  adagrad_update(p, s, g, dim, clr, eps);
}

}  // namespace tessera::numerics
