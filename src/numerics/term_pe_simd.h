// The fast PE step for 8 lanes with AVX2 (contract: numerics/term_pe.h), used by
// term_matmul_accumulate when the host has AVX2, L = 8 and W <= kSimdMaxFractionBits.
//
// Operands are pre-decoded into structure-of-arrays (TermLanesSoA), lanes contiguous, in 32-bit
// words:
//   code       finite: the exponent; zero: kZeroCode; Inf/NaN: kSpecialCode. A lane's product
//              code ca + cb is then an exponent (live lane), below -2^19 (a zero operand), or
//              at least 2^19 (an Inf/NaN operand, even times a zero: the step goes to the scalar
//              fast_step), so one horizontal maximum gives E, "any live lane" and "any special".
//   word       parallel operand: (ma << 18) | sign << 31; serial operand: term count | sign << 31.
//   power[t], sign[t]  serial operand: CSD term t (unused slots: power -64, sign 0).
// Per step, q = (32 - W + E) - pe per lane; term t's value is (ma << 18) >> (q - p_t) =
// trunc(ma * 2^(p_t + g)) with g = W - 14 - (E - pe) (p_t + g <= W - 6 <= 18, so the right shift
// amount is never negative); it is in bounds iff the amount is < 26 (p_t + g >= -7), and a larger
// amount gives 0 by itself (vpsrlvd gives 0 for amounts >= 32 too). Non-live lanes have huge q.
// Bound: a lane's value is below 2^(W + 3), 8 lanes below 2^(W + 6) <= 2^30.
#pragma once

#include <cstdint>
#include <vector>

#include "numerics/term_pe.h"
#include "numerics/term_pe_fast.h"

namespace tessera::numerics::detail {

inline constexpr int kSimdLanes = 8;
inline constexpr int kSimdMaxFractionBits = 24;

inline constexpr int32_t kZeroCode = -(1 << 20);
inline constexpr int32_t kSpecialCode = 1 << 24;

// One operand matrix: element (row, k) at index row * kp + k (k padded to a multiple of 8 with +0).
struct TermLanesSoA {
  int kp = 0;
  bool serial = false;
  std::vector<TermOperand> ops;  // for the scalar fallback
  std::vector<int32_t> code, word;
  std::vector<int32_t> power[kMaxTerms], sign[kMaxTerms];  // serial operand only

  void resize(int rows, int kp_, bool serial_);
  void set(int row, int k, TermOperand op);
};

bool host_has_avx2();

// Runs `steps` steps of `pes` PEs: PE p has its parallel operand A at index a0[p] + 8j and its
// serial operand B at b0[p] + 8j for step j, and its accumulator in acc[p]. Writes
// cycles[p * steps + j] (max(term_cycles, min_step_cycles)) and adds the lane counts of all steps
// to the totals. The PEs' steps are interleaved (step j of every PE, then step j + 1) so that
// their independent accumulator chains overlap on the host. Requires host_has_avx2(),
// cfg.lanes == 8, W <= kSimdMaxFractionBits.
void pe_steps_avx2(const PeConfig& cfg, const TermLanesSoA& a, const TermLanesSoA& b, int pes,
                   const int64_t* a0, const int64_t* b0, PeAccumulator* acc, int steps, int* cycles,
                   int64_t* processed, int64_t* skipped_zero, int64_t* skipped_oob, int64_t* lane_idle);

}  // namespace tessera::numerics::detail
