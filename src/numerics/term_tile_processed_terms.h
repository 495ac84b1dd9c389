// A lane's processed terms in every PE of a vector, over the operations of term_tile_simd.h: shared
// by the lean lockstep kernel (term_tile_group_kernel.h) and the step-by-step path
// (term_tile_avx2.cpp). Include it after defining TESSERA_GROUP_TARGET as the including file's
// target attribute; the template has internal linkage, so each file compiles its own copy.
#pragma once

#ifndef TESSERA_GROUP_TARGET
#error "define TESSERA_GROUP_TARGET before including term_tile_processed_terms.h"
#endif

#include <array>
#include <cstdint>

#include "numerics/term_tile_simd.h"

#if defined(__x86_64__)

namespace tessera::numerics::detail {
namespace {

// A lane's processed terms in every PE: its terms with d = h + (W - 7) - p <= W, i.e. p >= h - 7
// (h = gbase - pe, gbase = E - (W - 14), exponents biased by kExponentBias), where A is non-zero
// (pe > 0); 0 elsewhere. `table` is terms_from(); a byte shuffle looks the count up.
template <class S>
TESSERA_GROUP_TARGET inline typename S::V processed_terms(const std::array<std::array<uint8_t, 16>, 256>& table,
                                                          const SerialSteps::LiveB& b, typename S::V pe,
                                                          typename S::V gbase) {
  using V = typename S::V;
  const V from = S::broadcast_bytes16(table[b.significand].data());
  V c = S::sub(S::sub(gbase, pe), S::set1(7));
  c = S::min(S::max(c, S::zero()), S::set1(15));
  const V n = S::shuffle_bytes(from, S::bit_or(c, S::set1(static_cast<int32_t>(0x80808000u))));
  return S::keep(S::gt(pe, S::zero()), n);
}

}  // namespace
}  // namespace tessera::numerics::detail

#endif
