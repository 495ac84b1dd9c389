#include "numerics/bf16.h"

#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "numerics/host_cpu.h"

namespace tessera::numerics {

namespace {

#if defined(__x86_64__)
// The loop below, eight words at a time with the same integer operations; returns the words done.
__attribute__((target("avx2"))) long round_to_bf16_avx2(float* x, long n) {
  const __m256i magnitude = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
  const __m256i bias = _mm256_set1_epi32(0x7fff), one = _mm256_set1_epi32(1);
  const __m256i high = _mm256_set1_epi32(static_cast<int>(0xffff0000u)),
                quiet_bit = _mm256_set1_epi32(0x00400000);
  long i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i u = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    const __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, magnitude), inf);  // both < 2^31
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), one);
    const __m256i rounded =
        _mm256_and_si256(_mm256_add_epi32(_mm256_add_epi32(u, bias), lsb), high);
    const __m256i quiet = _mm256_or_si256(_mm256_and_si256(u, high), quiet_bit);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(x + i),
                        _mm256_blendv_epi8(rounded, quiet, is_nan));
  }
  return i;
}
#endif

}  // namespace

void round_to_bf16(float* x, long n) {
  long i = 0;
#if defined(__x86_64__)
  if (host_has_avx2()) i = round_to_bf16_avx2(x, n);
#endif
  for (; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, &x[i], 4);
    const bool is_nan = (u & 0x7fffffffu) > 0x7f800000u;
    const uint32_t lsb = (u >> 16) & 1u;
    const uint32_t rounded = ((u + 0x7fffu + lsb) >> 16) << 16;
    const uint32_t quiet = ((u >> 16) | 0x0040u) << 16;
    u = is_nan ? quiet : rounded;
    std::memcpy(&x[i], &u, 4);
  }
}

}  // namespace tessera::numerics
