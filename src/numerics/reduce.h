// Cross-lane reduction order, defined once (the reduce/permute unit and every host reference).
//
// Contract: a lane reduction over n values (n a power of two) is a pairwise tree. Level 1 combines
// lanes (0,1), (2,3), ...; level 2 combines the results pairwise again; and so on. Each sum is one
// fp32 rounding; max follows the same tree (max(NaN, x) = NaN, max(-0, +0) = +0).
// A non-power-of-two n is padded with the identity (+0 for sum, -Inf for max) up to the next
// power of two.
#pragma once

#include <cmath>
#include <limits>

namespace tessera::numerics {

float tree_sum(const float* x, int n);
float tree_max(const float* x, int n);

// max as the vector unit and the reduce tree define it: NaN if either is NaN; +0 beats -0. Inline:
// the vector unit applies it per element.
inline float fmax_ieee(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
  if (a == b) return std::signbit(a) ? b : a;  // +0 beats -0
  return a > b ? a : b;
}

// min likewise: NaN if either is NaN; -0 beats +0.
inline float fmin_ieee(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
  if (a == b) return std::signbit(a) ? a : b;  // -0 beats +0
  return a < b ? a : b;
}

}  // namespace tessera::numerics
