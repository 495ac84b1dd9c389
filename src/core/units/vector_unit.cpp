#include "core/units/vector_unit.h"

#include <immintrin.h>

#include <bit>
#include <cmath>
#include <limits>

#include "numerics/bf16.h"
#include "numerics/host_cpu.h"
#include "numerics/reduce.h"

namespace tessera::core {

using isa::Opcode;

namespace {

inline float f(uint32_t x) {
  return std::bit_cast<float>(x);
}
inline uint32_t u(float x) {
  return std::bit_cast<uint32_t>(x);
}
inline int32_t i32(uint32_t x) {
  return static_cast<int32_t>(x);
}

template <typename F>
void map1(uint32_t* d, const uint32_t* a, int n, F fn) {
  for (int i = 0; i < n; ++i) d[i] = fn(a[i]);
}
template <typename F>
void map2(uint32_t* d, const uint32_t* a, const uint32_t* b, int n, F fn) {
  for (int i = 0; i < n; ++i) d[i] = fn(a[i], b[i]);
}
template <typename F>
void cmp2(uint8_t* d, const uint32_t* a, const uint32_t* b, int n, F fn) {
  for (int i = 0; i < n; ++i) d[i] = fn(a[i], b[i]) ? 1 : 0;
}

uint32_t f32_to_s32(uint32_t bits) {
  const float x = f(bits);
  if (std::isnan(x)) return 0;
  if (x >= 2147483648.0f) return static_cast<uint32_t>(std::numeric_limits<int32_t>::max());
  if (x < -2147483648.0f) return static_cast<uint32_t>(std::numeric_limits<int32_t>::min());
  return static_cast<uint32_t>(static_cast<int32_t>(std::nearbyint(x)));
}

uint32_t bf16_bits(uint32_t x) {
  return numerics::bf16_from_f32(f(x)).bits;
}

// d = fma(a, b, c) per element, rounded once (IEEE fusedMultiplyAdd, what std::fma computes): the
// hardware FMA instruction is that operation, so both paths give identical bits. -ffp-contract=off
// still governs plain expressions; this is an explicit fused op.
__attribute__((target("avx2,fma"))) void fma_avx2(uint32_t* d, const uint32_t* a, const uint32_t* b,
                                                  const uint32_t* c, int n) {
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(reinterpret_cast<const float*>(a + i));
    const __m256 y = _mm256_loadu_ps(reinterpret_cast<const float*>(b + i));
    const __m256 z = _mm256_loadu_ps(reinterpret_cast<const float*>(c + i));
    _mm256_storeu_ps(reinterpret_cast<float*>(d + i), _mm256_fmadd_ps(x, y, z));
  }
  for (; i < n; ++i) d[i] = u(std::fma(f(a[i]), f(b[i]), f(c[i])));
}

void fma_portable(uint32_t* d, const uint32_t* a, const uint32_t* b, const uint32_t* c, int n) {
  for (int i = 0; i < n; ++i) d[i] = u(std::fma(f(a[i]), f(b[i]), f(c[i])));
}

void fma_rows(uint32_t* d, const uint32_t* a, const uint32_t* b, const uint32_t* c, int n) {
  if (numerics::host_has_avx2_fma())
    fma_avx2(d, a, b, c, n);
  else
    fma_portable(d, a, b, c, n);
}

}  // namespace

OpTiming VectorUnit::execute(const DecodedOp& op, int64_t now) {
  ArchState& s = m_state;
  const int n = words();
  m_events.vector_elements += n;
  m_events.vreg_elements += static_cast<int64_t>(op.vreg_reads + 1) * n;
  // Fields name vector registers only for some ops (others: masks, a scalar); only form
  // pointers into the vector register file for indices inside it.
  const int nv = s.vector_regs() + kShadowRegs;
  uint32_t* d = op.d < nv ? s.vreg(op.d) : nullptr;
  const uint32_t* a = op.a < nv ? s.vreg(op.a) : nullptr;
  const uint32_t* b = op.b < nv ? s.vreg(op.b) : nullptr;
  switch (op.op) {
    case Opcode::VADDF:
      map2(d, a, b, n, [](uint32_t x, uint32_t y) { return u(f(x) + f(y)); });
      break;
    case Opcode::VSUBF:
      map2(d, a, b, n, [](uint32_t x, uint32_t y) { return u(f(x) - f(y)); });
      break;
    case Opcode::VMULF:
      map2(d, a, b, n, [](uint32_t x, uint32_t y) { return u(f(x) * f(y)); });
      break;
    case Opcode::VMINF:
      map2(d, a, b, n, [](uint32_t x, uint32_t y) { return u(numerics::fmin_ieee(f(x), f(y))); });
      break;
    case Opcode::VMAXF:
      map2(d, a, b, n, [](uint32_t x, uint32_t y) { return u(numerics::fmax_ieee(f(x), f(y))); });
      break;
    case Opcode::VABSF:
      map1(d, a, n, [](uint32_t x) { return x & 0x7fffffffu; });
      break;
    case Opcode::VNEGF:
      map1(d, a, n, [](uint32_t x) { return x ^ 0x80000000u; });
      break;
    case Opcode::VFMAF: {
      fma_rows(d, a, b, s.vreg(op.c), n);
      break;
    }
    case Opcode::VADDI:
      map2(d, a, b, n, [](uint32_t x, uint32_t y) { return x + y; });
      break;
    case Opcode::VSUBI:
      map2(d, a, b, n, [](uint32_t x, uint32_t y) { return x - y; });
      break;
    case Opcode::VMULI:
      map2(d, a, b, n, [](uint32_t x, uint32_t y) { return x * y; });
      break;
    case Opcode::VMINI:
      map2(d, a, b, n, [](uint32_t x, uint32_t y) { return i32(x) < i32(y) ? x : y; });
      break;
    case Opcode::VMAXI:
      map2(d, a, b, n, [](uint32_t x, uint32_t y) { return i32(x) > i32(y) ? x : y; });
      break;
    case Opcode::VAND:
      map2(d, a, b, n, [](uint32_t x, uint32_t y) { return x & y; });
      break;
    case Opcode::VOR:
      map2(d, a, b, n, [](uint32_t x, uint32_t y) { return x | y; });
      break;
    case Opcode::VXOR:
      map2(d, a, b, n, [](uint32_t x, uint32_t y) { return x ^ y; });
      break;
    case Opcode::VSHL:
      map2(d, a, b, n, [](uint32_t x, uint32_t y) { return x << (y & 31); });
      break;
    case Opcode::VSHR:
      map2(d, a, b, n, [](uint32_t x, uint32_t y) { return x >> (y & 31); });
      break;
    case Opcode::VSRA:
      map2(d, a, b, n,
           [](uint32_t x, uint32_t y) { return static_cast<uint32_t>(i32(x) >> (y & 31)); });
      break;
    case Opcode::VCMPEQF:
      cmp2(s.mreg(op.d), a, b, n, [](uint32_t x, uint32_t y) { return f(x) == f(y); });
      break;
    case Opcode::VCMPNEF:
      cmp2(s.mreg(op.d), a, b, n, [](uint32_t x, uint32_t y) { return f(x) != f(y); });
      break;
    case Opcode::VCMPLTF:
      cmp2(s.mreg(op.d), a, b, n, [](uint32_t x, uint32_t y) { return f(x) < f(y); });
      break;
    case Opcode::VCMPLEF:
      cmp2(s.mreg(op.d), a, b, n, [](uint32_t x, uint32_t y) { return f(x) <= f(y); });
      break;
    case Opcode::VCMPEQI:
      cmp2(s.mreg(op.d), a, b, n, [](uint32_t x, uint32_t y) { return x == y; });
      break;
    case Opcode::VCMPLTI:
      cmp2(s.mreg(op.d), a, b, n, [](uint32_t x, uint32_t y) { return i32(x) < i32(y); });
      break;
    case Opcode::VCMPLEI:
      cmp2(s.mreg(op.d), a, b, n, [](uint32_t x, uint32_t y) { return i32(x) <= i32(y); });
      break;
    case Opcode::MAND:
    case Opcode::MOR:
    case Opcode::MNOT: {
      uint8_t* md = s.mreg(op.d);
      const uint8_t* ma = s.mreg(op.a);
      const uint8_t* mb = s.mreg(op.b);
      if (op.op == Opcode::MAND)
        for (int i = 0; i < n; ++i) md[i] = ma[i] & mb[i];
      if (op.op == Opcode::MOR)
        for (int i = 0; i < n; ++i) md[i] = ma[i] | mb[i];
      if (op.op == Opcode::MNOT)
        for (int i = 0; i < n; ++i) md[i] = ma[i] ^ 1;
      break;
    }
    case Opcode::VSEL: {
      const uint8_t* m = s.mreg(op.c);
      for (int i = 0; i < n; ++i) d[i] = m[i] ? a[i] : b[i];
      break;
    }
    case Opcode::VCVTF2I:
      map1(d, a, n, f32_to_s32);
      break;
    case Opcode::VCVTI2F:
      map1(d, a, n, [](uint32_t x) { return u(static_cast<float>(i32(x))); });
      break;
    case Opcode::VRNDBF:
      map1(d, a, n, [](uint32_t x) { return bf16_bits(x) << 16; });
      break;
    case Opcode::VPACKBF:
      map2(d, a, b, n, [](uint32_t x, uint32_t y) { return bf16_bits(y) << 16 | bf16_bits(x); });
      break;
    case Opcode::VUNPKLO:
      map1(d, a, n, [](uint32_t x) { return x << 16; });
      break;
    case Opcode::VUNPKHI:
      map1(d, a, n, [](uint32_t x) { return x & 0xffff0000u; });
      break;
    case Opcode::VBCAST: {
      const uint32_t v = s.sreg(op.a);
      for (int i = 0; i < n; ++i) d[i] = v;
      break;
    }
    case Opcode::VBCASTI: {
      const uint32_t v = static_cast<uint32_t>(op.imm);
      for (int i = 0; i < n; ++i) d[i] = v;
      break;
    }
    case Opcode::VMOV:
      if (d != a) map1(d, a, n, [](uint32_t x) { return x; });
      break;
    case Opcode::VLANEID:
      for (int i = 0; i < n; ++i) d[i] = static_cast<uint32_t>(i % m_spec.lanes);
      break;
    case Opcode::VSUBLANEID:
      for (int i = 0; i < n; ++i) d[i] = static_cast<uint32_t>(i / m_spec.lanes);
      break;
    default:
      break;
  }
  return fixed(op, now);
}

}  // namespace tessera::core
