#include "numerics/adam.h"

#include <cmath>

#include "numerics/eup.h"

namespace tessera::numerics {

void adam_moments(float* m, float* v, const float* g, long n, AdamConstants c) {
  for (long i = 0; i < n; ++i) {
    const float m1 = c.b1 * m[i];
    const float m2 = c.omb1 * g[i];
    m[i] = m1 + m2;
    const float v1 = c.b2 * v[i];
    const float g1 = c.omb2 * g[i];
    const float v2 = g1 * g[i];
    v[i] = v1 + v2;
  }
}

void adam_params(float* theta, const float* m, const float* v, long n, AdamConstants c,
                 AdamStepScalars s) {
  const float neg_step = -s.step;
  for (long i = 0; i < n; ++i) {
    const float root = eup_sqrt(v[i]);
    const float scaled = root / s.sqrt_bc2;
    const float denom = scaled + c.eps;
    const float ratio = m[i] / denom;
    const float delta = neg_step * ratio;
    theta[i] = theta[i] + delta;
  }
}

float adamw_decay_factor(double lr, double weight_decay) {
  return static_cast<float>(1.0 - lr * weight_decay);
}

void adamw_decay(float* theta, long n, float decay) {
  if (decay == 1.0f) return;
  for (long i = 0; i < n; ++i) theta[i] = theta[i] * decay;
}

float relative_change(float prev, float now) {
  const float d = now - prev;
  const float a = std::fabs(d);
  const float b = std::fabs(prev) + kConvergenceTiny;
  return a / b;
}

double relative_change_sum(const float* prev, const float* now, long n, double sum) {
  for (long i = 0; i < n; ++i) sum += static_cast<double>(relative_change(prev[i], now[i]));
  return sum;
}

float convergence_mean(double sum, int64_t n) {
  return static_cast<float>(sum / static_cast<double>(n));
}

void adamw_reference_step(float* theta, float* m, float* v, const float* g, long n, double lr,
                          double b1, double b2, double eps, double weight_decay, int64_t t) {
  const AdamConstants c = adam_constants(b1, b2, eps);
  const AdamStepScalars s = adam_step_scalars(lr, b1, b2, t);
  adamw_decay(theta, n, adamw_decay_factor(lr, weight_decay));
  adam_update(theta, m, v, g, n, c, s);
}

}  // namespace tessera::numerics
