// Eight-element forms of numerics/adam.h's stages for hosts with AVX2 (internal to numerics/:
// adam.cpp and optimizer.cpp use them). Each is the scalar definition's operations in the same
// order, eight lanes at a time: IEEE mul, add, div and sqrt are correctly rounded per lane, so
// every element is bit-identical to the scalar loop (eup_sqrt is the correctly rounded fp32 sqrt:
// numerics/eup.h). Callers check the host (host_cpu.h) and call these only from functions
// compiled with target("avx2").
#pragma once

#if defined(__x86_64__)
#include <immintrin.h>

#include "numerics/host_cpu.h"
#include "numerics/optimizer.h"

namespace tessera::numerics::avx2 {

// adam_moments on m[0..8), v[0..8), g[0..8).
__attribute__((target("avx2"), always_inline)) inline void moments8(float* m, float* v,
                                                                    const float* g,
                                                                    const AdamConstants& c) {
  const __m256 gi = _mm256_loadu_ps(g);
  const __m256 m1 = _mm256_mul_ps(_mm256_set1_ps(c.b1), _mm256_loadu_ps(m));
  const __m256 m2 = _mm256_mul_ps(_mm256_set1_ps(c.omb1), gi);
  _mm256_storeu_ps(m, _mm256_add_ps(m1, m2));
  const __m256 v1 = _mm256_mul_ps(_mm256_set1_ps(c.b2), _mm256_loadu_ps(v));
  const __m256 v2 = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(c.omb2), gi), gi);
  _mm256_storeu_ps(v, _mm256_add_ps(v1, v2));
}

// adam_params on theta[0..8), m[0..8), v[0..8).
__attribute__((target("avx2"), always_inline)) inline void params8(float* theta, const float* m,
                                                                   const float* v,
                                                                   const AdamConstants& c,
                                                                   AdamStepScalars s) {
  const __m256 root = _mm256_sqrt_ps(_mm256_loadu_ps(v));
  const __m256 scaled = _mm256_div_ps(root, _mm256_set1_ps(s.sqrt_bc2));
  const __m256 denom = _mm256_add_ps(scaled, _mm256_set1_ps(c.eps));
  const __m256 ratio = _mm256_div_ps(_mm256_loadu_ps(m), denom);
  const __m256 delta = _mm256_mul_ps(_mm256_set1_ps(-s.step), ratio);
  _mm256_storeu_ps(theta, _mm256_add_ps(_mm256_loadu_ps(theta), delta));
}

}  // namespace tessera::numerics::avx2
#endif
