// Cross-lane reduction order, defined once (the reduce/permute unit and every host reference).
//
// Contract: a lane reduction over n values (n a power of two) is a pairwise tree. Level 1 combines
// lanes (0,1), (2,3), ...; level 2 combines the results pairwise again; and so on. Each sum is one
// fp32 rounding; max follows the same tree (max(NaN, x) = NaN, max(-0, +0) = +0).
// A non-power-of-two n is padded with the identity (+0 for sum, -Inf for max) up to the next
// power of two.
#pragma once

namespace tessera::numerics {

float tree_sum(const float* x, int n);
float tree_max(const float* x, int n);
// max as the vector unit and the reduce tree define it: NaN if either is NaN; +0 beats -0.
float fmax_ieee(float a, float b);
float fmin_ieee(float a, float b);

}  // namespace tessera::numerics
