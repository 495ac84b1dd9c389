// What the host CPU offers, asked once per process, and how much of it the numerics may use
// (numerics' vector paths check it and otherwise run their portable loops; every path gives the
// same bits).
#pragma once

#include <atomic>
#include <optional>
#include <string>

namespace tessera::numerics {

// The widest vector instruction set the fast paths may use. The default is Avx512: each path
// then takes the widest the host has. Every setting gives bit-identical results, so a cap only
// changes speed: for benchmarks (what a host without AVX-512 would see), profiling, and tests
// that run every path on one host.
enum class VectorIsa { Portable = 0, Avx2 = 1, Avx512 = 2 };

inline std::atomic<VectorIsa>& vector_isa_cap_storage() {
  static std::atomic<VectorIsa> cap{VectorIsa::Avx512};
  return cap;
}
inline void set_vector_isa_cap(VectorIsa isa) {
  vector_isa_cap_storage().store(isa, std::memory_order_relaxed);
}
inline VectorIsa vector_isa_cap() {
  return vector_isa_cap_storage().load(std::memory_order_relaxed);
}
inline bool vector_isa_allowed(VectorIsa isa) {
  return static_cast<int>(isa) <= static_cast<int>(vector_isa_cap());
}

// "avx512", "avx2", "portable" (and "auto" = avx512: the widest the host has); nullopt otherwise.
inline std::optional<VectorIsa> parse_vector_isa(const std::string& name) {
  if (name == "auto" || name == "avx512") return VectorIsa::Avx512;
  if (name == "avx2") return VectorIsa::Avx2;
  if (name == "portable") return VectorIsa::Portable;
  return std::nullopt;
}

// The host's vector features, asked once per process.
struct HostFeatures {
  bool avx2 = false, fma = false, avx512f = false, avx512bw = false;
};
inline const HostFeatures& host_features() {
  static const HostFeatures f = [] {
    HostFeatures h;
#if defined(__x86_64__)
    h.avx2 = __builtin_cpu_supports("avx2");
    h.fma = __builtin_cpu_supports("fma");
    h.avx512f = __builtin_cpu_supports("avx512f");
    h.avx512bw = __builtin_cpu_supports("avx512bw");
#endif
    return h;
  }();
  return f;
}

// Whether a vector path may run: the host has its instructions and the cap allows their set.
inline bool host_has_avx2() {
  return host_features().avx2 && vector_isa_allowed(VectorIsa::Avx2);
}
// AVX2 together with FMA3 (the matrix unit's and the vector unit's fused multiply-add paths).
inline bool host_has_avx2_fma() {
  return host_features().avx2 && host_features().fma && vector_isa_allowed(VectorIsa::Avx2);
}
// AVX-512 Foundation (the matrix unit's 512-bit fused multiply-add path).
inline bool host_has_avx512f() {
  return host_features().avx512f && vector_isa_allowed(VectorIsa::Avx512);
}
// AVX-512 Foundation and Byte/Word (the 16-PE term-serial kernel).
inline bool host_has_avx512bw() {
  return host_features().avx512f && host_features().avx512bw &&
         vector_isa_allowed(VectorIsa::Avx512);
}

// The widest set the fast paths use now: the cap, lowered to what the host has ("avx512",
// "avx2" or "portable"; for reports).
inline const char* vector_isa_in_use() {
  if (host_has_avx512bw()) return "avx512";
  if (host_has_avx2_fma()) return "avx2";
  return "portable";
}

}  // namespace tessera::numerics
