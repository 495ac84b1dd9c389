// The scalar fast step of the term-serial PE (contract: term_pe.h), on pre-decoded operands.
//
// Shared by TermPe::step, term_matmul_accumulate's scalar path and the vector tile's steps with
// Inf/NaN. Arithmetic is in units of the window's least significant bit 2^(E - W) in a signed
// integer Int: int64_t when W + 3 + ceil(log2(L + 1)) <= 62 (fp32-like widths), else __int128.
// Bound: a lane's terms sum in magnitude to less than 2^(W + 3) and the aligned accumulator is
// below 2^(W + 1). Lane value: with g = W - 14 - (E - pe), term (p, s) is shifted by p + g (left if
// >= 0, else a truncating right shift) and is in bounds iff p + g >= -7. If g >= 0 every term is in
// bounds and exact, so the lane's contribution is ma * mb << g (one multiply instead of a term
// loop).
#pragma once

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdint>
#include <type_traits>

#include "numerics/term_encoding.h"
#include "numerics/term_pe/term_pe.h"

namespace tessera::numerics::detail {

struct TermOperand {
  int16_t exponent = 0;
  uint8_t significand = 0;
  uint8_t code = 0;  // bit 0: negative; bits 1-2: Bf16Class
  Bf16Class cls() const { return static_cast<Bf16Class>(code >> 1); }
  bool negative() const { return (code & 1) != 0; }
};

inline TermOperand make_operand(Bf16 v) {
  const Bf16Fields f = decode_bf16(v);
  TermOperand op;
  op.exponent = static_cast<int16_t>(f.exponent);
  op.significand = f.significand;
  op.code = static_cast<uint8_t>((f.negative ? 1 : 0) | (static_cast<int>(f.cls) << 1));
  return op;
}

inline int bit_length_u128(unsigned __int128 x) {
  const auto hi = static_cast<uint64_t>(x >> 64);
  const auto lo = static_cast<uint64_t>(x);
  return hi != 0 ? 128 - std::countl_zero(hi) : 64 - std::countl_zero(lo);
}

// round(x / 2^s), nearest even; 1 <= s < 127.
inline unsigned __int128 shift_right_rne(unsigned __int128 x, int s) {
  const unsigned __int128 q = x >> s;
  const unsigned __int128 rem = x & ((static_cast<unsigned __int128>(1) << s) - 1);
  const unsigned __int128 half = static_cast<unsigned __int128>(1) << (s - 1);
  return (rem > half || (rem == half && (q & 1) != 0)) ? q + 1 : q;
}

inline bool use_int64(const PeConfig& cfg) {
  const int lane_bits = std::bit_width(static_cast<unsigned>(cfg.lanes));  // ceil(log2(L + 1))
  return cfg.acc_fraction_bits + 3 + lane_bits <= 62;
}

// Normalises the exact window sum `sum` (units 2^(E - W), non-zero) into acc (contract step 5).
template <class Int>
inline void normalise_into(Int sum, int E, const PeConfig& cfg, PeAccumulator& acc) {
  const int W = cfg.acc_fraction_bits;
  const bool negative = sum < 0;
  const auto mag = static_cast<unsigned __int128>(negative ? -static_cast<__int128>(sum)
                                                           : static_cast<__int128>(sum));
  const int lead = bit_length_u128(mag) - 1;
  unsigned __int128 sig;
  int exponent;
  if (lead > W) {
    sig = shift_right_rne(mag, lead - W);
    exponent = E + (lead - W);
    if ((sig >> (W + 1)) != 0) {
      sig >>= 1;
      ++exponent;
    }
  } else {
    sig = mag << (W - lead);
    exponent = E - (W - lead);
  }
  acc.negative = negative;
  if (exponent > cfg.acc_max_exponent) {
    acc.kind = PeAccumulator::Kind::Inf;
    acc.exponent = 0;
    acc.significand = 0;
    return;
  }
  acc.kind = PeAccumulator::Kind::Finite;
  acc.exponent = exponent;
  acc.significand = sig;
}

// One step over lanes a[0..n), b[0..n) of a PE with cfg.lanes >= n lanes (lanes n.. are +0 * +0).
// Writes lanes[0..n) and returns the step's term_cycles.
template <class Int>
int fast_step(const PeConfig& cfg, const TermOperand* a, const TermOperand* b, int n,
              PeAccumulator& acc, LaneTerms* lanes) {
  using Kind = PeAccumulator::Kind;
  const int W = cfg.acc_fraction_bits;
  bool nan = acc.kind == Kind::NaN;
  bool pos_inf = acc.kind == Kind::Inf && !acc.negative;
  bool neg_inf = acc.kind == Kind::Inf && acc.negative;
  bool all_negative_zero = n == cfg.lanes;
  int pe_max = INT_MIN;
  for (int i = 0; i < n; ++i) {
    const Bf16Class ca = a[i].cls(), cb = b[i].cls();
    const bool product_negative = a[i].negative() != b[i].negative();
    if (ca == Bf16Class::Finite && cb == Bf16Class::Finite) {
      pe_max = std::max(pe_max, a[i].exponent + b[i].exponent);
    } else if (ca == Bf16Class::NaN || cb == Bf16Class::NaN) {
      nan = true;
    } else if (ca == Bf16Class::Inf || cb == Bf16Class::Inf) {
      if (ca == Bf16Class::Zero || cb == Bf16Class::Zero)
        nan = true;
      else
        (product_negative ? neg_inf : pos_inf) = true;
    } else if (!product_negative) {
      all_negative_zero = false;
    }
  }
  const bool any_live = pe_max != INT_MIN;
  int E = pe_max;
  if (acc.kind == Kind::Finite) E = std::max(E, acc.exponent);
  if (cfg.fixed_exponent_mode) E = std::max(E, cfg.fixed_exponent);

  const auto& table = csd_table();
  Int partial = 0;
  int term_cycles = 0;
  for (int i = 0; i < n; ++i) {
    if (a[i].cls() != Bf16Class::Finite || b[i].cls() != Bf16Class::Finite) {
      lanes[i] = LaneTerms{0, kTermSlots, 0};
      continue;
    }
    const TermList& tl = table[b[i].significand];
    const int g = W - 14 - (E - (a[i].exponent + b[i].exponent));
    const Int ma = a[i].significand;
    const bool lane_negative = a[i].negative() != b[i].negative();
    int processed;
    Int lane_value;
    if (g >= 0) {
      processed = tl.count;
      lane_value = (ma * static_cast<Int>(b[i].significand)) << g;
    } else {
      processed = 0;
      lane_value = 0;
      for (; processed < tl.count; ++processed) {
        const int sh = tl.terms[processed].power + g;
        if (sh < -7) break;
        const Int shifted = sh >= 0 ? ma << sh : ma >> -sh;
        lane_value += tl.terms[processed].sign > 0 ? shifted : -shifted;
      }
    }
    partial += lane_negative ? -lane_value : lane_value;
    lanes[i] =
        LaneTerms{static_cast<uint8_t>(processed), static_cast<uint8_t>(kTermSlots - tl.count),
                  static_cast<uint8_t>(tl.count - processed)};
    term_cycles = std::max(term_cycles, processed);
  }

  if (nan || (pos_inf && neg_inf)) {
    acc = PeAccumulator{Kind::NaN, false, 0, 0};
    return term_cycles;
  }
  if (pos_inf || neg_inf) {
    acc = PeAccumulator{Kind::Inf, neg_inf, 0, 0};
    return term_cycles;
  }
  Int sum = partial;
  if (acc.kind == Kind::Finite) {
    const int sh = E - acc.exponent;
    if (sh <= W + 1) {
      const Int aligned = static_cast<Int>(acc.significand >> sh);
      sum += acc.negative ? -aligned : aligned;
    }
  }
  if (sum == 0) {
    const bool all_zero_addends = !any_live && acc.kind == Kind::Zero;
    acc = PeAccumulator{Kind::Zero, all_zero_addends && acc.negative && all_negative_zero, 0, 0};
    return term_cycles;
  }
  normalise_into(sum, E, cfg, acc);
  return term_cycles;
}

}  // namespace tessera::numerics::detail
