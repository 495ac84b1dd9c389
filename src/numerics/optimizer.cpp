#include "numerics/optimizer.h"

#include <cmath>

#include "numerics/eup.h"

namespace tessera::numerics {

SgdConstants sgd_constants(double lr, double momentum) {
  return {static_cast<float>(lr), static_cast<float>(momentum)};
}

AdamConstants adam_constants(double b1, double b2, double eps) {
  return {static_cast<float>(b1), static_cast<float>(b2), static_cast<float>(eps),
          static_cast<float>(1.0 - b1), static_cast<float>(1.0 - b2)};
}

AdamStepScalars adam_step_scalars(double lr, double b1, double b2, int64_t t) {
  const double bc1 = 1.0 - std::pow(b1, static_cast<double>(t));
  const double bc2 = 1.0 - std::pow(b2, static_cast<double>(t));
  return {static_cast<float>(lr / bc1), static_cast<float>(std::sqrt(bc2))};
}

void sgd_momentum_update(float* theta, float* vel, const float* g, long n, SgdConstants c) {
  const float neg_lr = -c.lr;
  for (long i = 0; i < n; ++i) {
    const float mv = c.mu * vel[i];
    vel[i] = mv + g[i];
    const float delta = neg_lr * vel[i];
    theta[i] = theta[i] + delta;
  }
}

void adam_update(float* theta, float* m, float* v, const float* g, long n, AdamConstants c,
                 AdamStepScalars s) {
  const float neg_step = -s.step;
  for (long i = 0; i < n; ++i) {
    const float m1 = c.b1 * m[i];
    const float m2 = c.omb1 * g[i];
    m[i] = m1 + m2;
    const float v1 = c.b2 * v[i];
    const float g1 = c.omb2 * g[i];
    const float v2 = g1 * g[i];
    v[i] = v1 + v2;
    const float root = eup_sqrt(v[i]);
    const float scaled = root / s.sqrt_bc2;
    const float denom = scaled + c.eps;
    const float ratio = m[i] / denom;
    const float delta = neg_step * ratio;
    theta[i] = theta[i] + delta;
  }
}

}  // namespace tessera::numerics
