#include "numerics/term_encoding.h"

namespace tessera::numerics {

// Non-adjacent form, least significant digit first: an odd remainder n takes the digit
// 2 - (n mod 4) (+1 if n = 1 mod 4, -1 if n = 3 mod 4), which leaves n - digit divisible by 4, so
// the next digit is 0. The digits are then stored most significant first.
TermList csd_encode(uint8_t significand) {
  TermList low_first;
  int n = significand;
  for (int power = 0; n != 0; ++power, n >>= 1) {
    if ((n & 1) == 0) continue;
    const int digit = 2 - (n & 3);
    n -= digit;
    low_first.terms[low_first.count++] =
        Term{static_cast<int8_t>(power), static_cast<int8_t>(digit)};
  }
  TermList out;
  out.count = low_first.count;
  for (int i = 0; i < low_first.count; ++i) out.terms[i] = low_first.terms[low_first.count - 1 - i];
  return out;
}

const std::array<TermList, 256>& csd_table() {
  static const std::array<TermList, 256> table = [] {
    std::array<TermList, 256> t{};
    for (int m = 0; m < 256; ++m) t[m] = csd_encode(static_cast<uint8_t>(m));
    return t;
  }();
  return table;
}

}  // namespace tessera::numerics
