#include "numerics/optimizer.h"

#include <cmath>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "numerics/adam.h"
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
// The same operations 8 lanes at a time: IEEE mul/add/div/sqrt are correctly rounded, so every
// element is bit-identical to the scalar order (eup_sqrt is the correctly rounded sqrt).
__attribute__((target("avx2"))) long adam_update_avx2(float* theta, float* m, float* v,
                                                      const float* g, long n, AdamConstants c,
                                                      AdamStepScalars s) {
  const __m256 b1 = _mm256_set1_ps(c.b1), omb1 = _mm256_set1_ps(c.omb1), b2 = _mm256_set1_ps(c.b2);
  const __m256 omb2 = _mm256_set1_ps(c.omb2), eps = _mm256_set1_ps(c.eps);
  const __m256 sqrt_bc2 = _mm256_set1_ps(s.sqrt_bc2), neg_step = _mm256_set1_ps(-s.step);
  long i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 gi = _mm256_loadu_ps(g + i);
    const __m256 mi =
        _mm256_add_ps(_mm256_mul_ps(b1, _mm256_loadu_ps(m + i)), _mm256_mul_ps(omb1, gi));
    const __m256 vi = _mm256_add_ps(_mm256_mul_ps(b2, _mm256_loadu_ps(v + i)),
                                    _mm256_mul_ps(_mm256_mul_ps(omb2, gi), gi));
    const __m256 denom = _mm256_add_ps(_mm256_div_ps(_mm256_sqrt_ps(vi), sqrt_bc2), eps);
    const __m256 delta = _mm256_mul_ps(neg_step, _mm256_div_ps(mi, denom));
    _mm256_storeu_ps(m + i, mi);
    _mm256_storeu_ps(v + i, vi);
    _mm256_storeu_ps(theta + i, _mm256_add_ps(_mm256_loadu_ps(theta + i), delta));
  }
  return i;
}
#endif

}  // namespace

void adam_update(float* theta, float* m, float* v, const float* g, long n, AdamConstants c,
                 AdamStepScalars s) {
  long done = 0;
#if defined(__x86_64__)
  static const bool has_avx2 = __builtin_cpu_supports("avx2");
  if (has_avx2) done = adam_update_avx2(theta, m, v, g, n, c, s);
#endif
  adam_update_scalar(theta + done, m + done, v + done, g + done, n - done, c, s);
}

}  // namespace tessera::numerics
