#include "numerics/adam.h"

#include <algorithm>
#include <cmath>

#include "numerics/adam_avx2.h"
#include "numerics/eup.h"

namespace tessera::numerics {

namespace {

#if defined(__x86_64__)
// The AVX2 bodies: whole groups of eight elements (adam_avx2.h); they return how many elements
// they did, the scalar loops below do the rest.
__attribute__((target("avx2"))) long moments_avx2(float* m, float* v, const float* g, long n,
                                                  AdamConstants c) {
  long i = 0;
  for (; i + 8 <= n; i += 8) avx2::moments8(m + i, v + i, g + i, c);
  return i;
}

__attribute__((target("avx2"))) long params_avx2(float* theta, const float* m, const float* v,
                                                 long n, AdamConstants c, AdamStepScalars s) {
  long i = 0;
  for (; i + 8 <= n; i += 8) avx2::params8(theta + i, m + i, v + i, c, s);
  return i;
}

// relative_change of eight elements at once (the same four fp32 operations per lane) into
// temp[0..n - n % 8); returns how many it did. The fp64 sum stays a sequential loop.
__attribute__((target("avx2"))) long relative_changes_avx2(const float* prev, const float* now,
                                                           long n, float* temp) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 tiny = _mm256_set1_ps(kConvergenceTiny);
  long i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 p = _mm256_loadu_ps(prev + i);
    const __m256 d = _mm256_sub_ps(_mm256_loadu_ps(now + i), p);
    const __m256 a = _mm256_and_ps(d, abs_mask);
    const __m256 b = _mm256_add_ps(_mm256_and_ps(p, abs_mask), tiny);
    _mm256_storeu_ps(temp + i, _mm256_div_ps(a, b));
  }
  return i;
}
#endif

}  // namespace

void adam_moments(float* m, float* v, const float* g, long n, AdamConstants c) {
  long i = 0;
#if defined(__x86_64__)
  if (host_has_avx2()) i = moments_avx2(m, v, g, n, c);
#endif
  for (; i < n; ++i) {
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
  long i = 0;
#if defined(__x86_64__)
  if (host_has_avx2()) i = params_avx2(theta, m, v, n, c, s);
#endif
  for (; i < n; ++i) {
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
  long i = 0;
#if defined(__x86_64__)
  if (host_has_avx2()) {
    constexpr long kChunk = 256;  // temps per pass, on the stack
    float temp[kChunk];
    for (; i + 8 <= n;) {
      const long len = relative_changes_avx2(prev + i, now + i, std::min(kChunk, n - i), temp);
      for (long k = 0; k < len; ++k) sum += static_cast<double>(temp[k]);
      i += len;
    }
  }
#endif
  for (; i < n; ++i) sum += static_cast<double>(relative_change(prev[i], now[i]));
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
