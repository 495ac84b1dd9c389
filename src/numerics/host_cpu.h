// What the host CPU offers, asked once per process (numerics' vector paths check it and otherwise
// run their portable loops; every path gives the same bits).
#pragma once

namespace tessera::numerics {

inline bool host_has_avx2() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
#else
  return false;
#endif
}

// AVX2 together with FMA3 (the matrix unit's and the vector unit's fused multiply-add paths).
inline bool host_has_avx2_fma() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

// AVX-512 Foundation (the matrix unit's 512-bit fused multiply-add path).
inline bool host_has_avx512f() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
#else
  return false;
#endif
}

// AVX-512 Foundation and Byte/Word (the 16-PE term-serial kernel).
inline bool host_has_avx512bw() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
  return has;
#else
  return false;
#endif
}

}  // namespace tessera::numerics
