// Per-vector algorithms over the operations of simd_ops.h, shared by the lean lockstep kernel
// (group_runs_kernel.h) and the step-by-step path (group_steps_avx2.cpp): a lane's processed
// terms, and step 5's rounding to the accumulator's width.
//
// A per-target header (numerics/term_pe/term_pe.h, "Per-target instantiation"): include it only
// after defining TESSERA_SIMD_TARGET as the including file's target attribute. Its templates carry
// that attribute and have internal linkage, so each including file compiles its own copy for its
// own target.
#pragma once

#ifndef TESSERA_SIMD_TARGET
#error "simd_lane_ops.h is a per-target header: define TESSERA_SIMD_TARGET first (term_pe.h)"
#endif

#include <array>
#include <cstdint>

#include "numerics/term_pe/simd_ops.h"
#include "numerics/term_pe/tile.h"

#if defined(__x86_64__)

namespace tessera::numerics::detail {
namespace {

// A lane's processed terms in every PE: its terms with d = h + (W - 7) - p <= W, i.e. p >= h - 7
// (h = gbase - pe, gbase = E - (W - 14), exponents biased by kExponentBias), where A is non-zero
// (pe > 0); 0 elsewhere. `table` is terms_from(); a byte shuffle looks the count up.
template <class S>
TESSERA_SIMD_TARGET inline typename S::V processed_terms(
    const std::array<std::array<uint8_t, 16>, 256>& table, const SerialSteps::LiveB& b,
    typename S::V pe, typename S::V gbase) {
  using V = typename S::V;
  const V from = S::broadcast_bytes16(table[b.significand].data());
  V c = S::sub(S::sub(gbase, pe), S::set1(7));
  c = S::min(S::max(c, S::zero()), S::set1(15));
  const V n = S::shuffle_bytes(from, S::bit_or(c, S::set1(static_cast<int32_t>(0x80808000u))));
  return S::keep(S::gt(pe, S::zero()), n);
}

// Contract step 5's rounding: mag (0 < mag < 2^31, a window sum's magnitude) rounded to W + 1
// significant bits, nearest even, as q * 2^s with 2^W <= q < 2^(W+1) (garbage where mag = 0).
template <class S>
TESSERA_SIMD_TARGET inline void round_to_width(typename S::V mag, int W, typename S::V& q,
                                               typename S::V& s) {
  using V = typename S::V;
  using M = typename S::M;
  const V one = S::set1(1);
  // Leading bit: the float exponent, less one where the conversion rounded up to a power of two.
  V lead = S::sub(S::srli(S::f32_bits(mag), 23), S::set1(127));
  lead = S::decrement_where(S::gt(S::sllv(one, lead), mag), lead);
  s = S::sub(lead, S::set1(W));
  const M right = S::gt(s, S::zero());
  V q_right = S::srlv(mag, s);
  const V rem = S::bit_and(mag, S::sub(S::sllv(one, s), one));
  const V half = S::sllv(one, S::sub(s, one));
  const M odd = S::eq(S::bit_and(q_right, one), one);
  const M up = S::mask_or(S::gt(rem, half), S::mask_and(S::eq(rem, half), odd));
  q_right = S::increment_where(up, q_right);
  const V q_left = S::sllv(mag, S::sub(S::zero(), s));
  q = S::select(right, q_right, q_left);
  const M carry = S::gt(q, S::set1((1 << (W + 1)) - 1));
  q = S::select(carry, S::srli(q, 1), q);
  s = S::increment_where(carry, s);
}

}  // namespace
}  // namespace tessera::numerics::detail

#endif
