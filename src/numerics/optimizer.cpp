#include "numerics/optimizer.h"

#include <cmath>

#include "numerics/adam.h"
#include "numerics/adam_avx2.h"
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

namespace {

// The contract's order, one element at a time: the unit's two stages (numerics/adam.h) applied
// in turn. Elements are independent, so this equals the fused per-element loop bit for bit.
void adam_update_scalar(float* theta, float* m, float* v, const float* g, long n, AdamConstants c,
                        AdamStepScalars s) {
  adam_moments(m, v, g, n, c);
  adam_params(theta, m, v, n, c, s);
}

#if defined(__x86_64__)
// The same operations 8 lanes at a time (numerics/adam_avx2.h: bit-identical to the scalar order),
// both stages per group of eight so m and v stay in cache.
__attribute__((target("avx2"))) long adam_update_avx2(float* theta, float* m, float* v,
                                                      const float* g, long n, AdamConstants c,
                                                      AdamStepScalars s) {
  long i = 0;
  for (; i + 8 <= n; i += 8) {
    avx2::moments8(m + i, v + i, g + i, c);
    avx2::params8(theta + i, m + i, v + i, c, s);
  }
  return i;
}
#endif

}  // namespace

void adam_update(float* theta, float* m, float* v, const float* g, long n, AdamConstants c,
                 AdamStepScalars s) {
  long done = 0;
#if defined(__x86_64__)
  if (host_has_avx2()) done = adam_update_avx2(theta, m, v, g, n, c, s);
#endif
  adam_update_scalar(theta + done, m + done, v + done, g + done, n - done, c, s);
}

}  // namespace tessera::numerics
