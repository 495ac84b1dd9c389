// Term encoding of bf16 significands for the term-serial processing element (docs/term-serial.md).
//
// A bf16 value is decoded into (sign, class, exponent, significand):
//   * significand: the 8-bit integer 1.fffffff with its hidden bit (128..255) for normal numbers,
//     0.fffffff (1..127) for subnormals, 0 for zeros;
//   * exponent: the unbiased exponent; subnormals use -126 (the hidden bit is 0 instead);
//   * value = (-1)^sign * significand * 2^(exponent - 7).
//
// Encoding: canonical signed digit (CSD, the non-adjacent form). The significand m (0..255) is
// written as m = sum_t s_t * 2^(p_t) with s_t in {+1, -1}, powers p_t in 0..8 (an 8-bit m can
// need a 9th digit: 255 = 2^8 - 2^0), no two non-zero digits adjacent. CSD is the unique
// signed-digit form with the non-adjacency property and has the minimum number of non-zero digits
// of all signed-digit forms, so it gives the fewest terms (= the fewest PE cycles) of any
// encoding. Radix-4 Booth, the other option the spec allows, is never fewer and is more for 93 of
// the 256 significands (e.g. 2: CSD +2^1, Booth-4 4^1 - 2*4^0, 2 terms; 34: CSD
// 2^5 + 2^1, Booth-4 4 terms); over normal significands (128..255) CSD averages 3.45 terms,
// Booth-4 4.0 (tests/numerics/term_encoding_test.cpp checks both claims). Booth's advantage, a
// fixed digit count, does not matter to a PE that skips zero digits anyway. At most 5 terms.
//
// Terms are listed from the most significant power down: the order the PE processes them, so the
// out-of-bounds terms of a lane are always a tail of its list.
#pragma once

#include <array>
#include <cstdint>

#include "numerics/bf16.h"

namespace tessera::numerics {

inline constexpr int kSignificandBits = 8;  // with the hidden bit
inline constexpr int kMaxTerms = 5;         // max CSD weight of an 8-bit value
inline constexpr int kMaxTermPower = 8;     // 2^8 appears, e.g. for 255 = 2^8 - 1
// Term slots per lane and step: a bit-serial PE without skipping would spend one cycle per
// significand bit. processed + skipped_zero + skipped_out_of_bounds == kTermSlots per lane.
inline constexpr int kTermSlots = kSignificandBits;

struct Term {
  int8_t power = 0;  // 0..kMaxTermPower
  int8_t sign = 1;   // +1 or -1
  friend constexpr bool operator==(Term, Term) = default;
};

struct TermList {
  uint8_t count = 0;
  std::array<Term, kMaxTerms> terms{};  // terms[0..count), powers strictly descending
};

// The CSD digits of `significand`, computed digit by digit (the plain algorithm; see csd_table()).
TermList csd_encode(uint8_t significand);

// All 256 encodings, precomputed from csd_encode (for the fast PE).
const std::array<TermList, 256>& csd_table();

// Number of non-zero terms of the CSD form of `significand` (0 for 0).
inline int term_count(uint8_t significand) {
  return csd_table()[significand].count;
}

enum class Bf16Class : uint8_t { Zero, Finite, Inf, NaN };

struct Bf16Fields {
  bool negative = false;
  Bf16Class cls = Bf16Class::Zero;
  int exponent = 0;         // unbiased; -126 for subnormals; 0 for zeros, Inf and NaN
  uint8_t significand = 0;  // with hidden bit; 0 for zeros, Inf and NaN
};

constexpr Bf16Fields decode_bf16(Bf16 v) {
  Bf16Fields f;
  f.negative = (v.bits & 0x8000u) != 0;
  const int e = (v.bits >> 7) & 0xff;
  const int frac = v.bits & 0x7f;
  if (e == 0xff) {
    f.cls = frac != 0 ? Bf16Class::NaN : Bf16Class::Inf;
  } else if (e == 0) {
    f.cls = frac != 0 ? Bf16Class::Finite : Bf16Class::Zero;
    f.exponent = frac != 0 ? -126 : 0;
    f.significand = static_cast<uint8_t>(frac);
  } else {
    f.cls = Bf16Class::Finite;
    f.exponent = e - 127;
    f.significand = static_cast<uint8_t>(0x80 | frac);
  }
  return f;
}

}  // namespace tessera::numerics
