// Sum over the rows of a matrix (batch sums: bias gradients, the mean of per-sample losses),
// defined once for the simulator and every host reference.
//
// Contract (bit-exact): for each column c of the rows x cols matrix x (row stride ld),
//   p[s] = +0.0f; for r = s, s + S, s + 2S, ... < rows (ascending): p[s] = p[s] + x[r][c]
// for s = 0 .. S-1 (S = `sublanes`, the vector unit's sublane count: accumulating whole vregs of
// S rows each leaves sublane s holding p[s]), then out[c] = tree_sum(p, S) (numerics/reduce.h:
// the pairwise tree across the S partial sums). Every addition is one fp32 rounding.
// S must be >= 1; rows may be any count (sublanes past the last row keep +0).
#pragma once

#include <cstddef>
#include <vector>

#include "numerics/reduce.h"

namespace tessera::numerics {

// The host references' sublane count (the shipped TPU-like cores have 8).
inline constexpr int kColumnSumSublanes = 8;

void column_sum(const float* x, int rows, int cols, int ld, float* out,
                int sublanes = kColumnSumSublanes);

// The same sum over terms computed on the fly, term(r, c) for row r < rows and column c < cols (a
// float each; e.g. a product of two matrices' elements), in the same order and roundings.
template <typename Term>
void column_sum_of(long rows, int cols, float* out, const Term& term,
                   int sublanes = kColumnSumSublanes) {
  std::vector<float> partial(static_cast<size_t>(sublanes) * cols, 0.0f);  // [s][c]
  for (long r = 0; r < rows; ++r) {
    float* p = partial.data() + static_cast<size_t>(r % sublanes) * cols;
    for (int c = 0; c < cols; ++c) p[c] = p[c] + term(r, c);
  }
  std::vector<float> column(static_cast<size_t>(sublanes));
  for (int c = 0; c < cols; ++c) {
    for (int s = 0; s < sublanes; ++s)
      column[static_cast<size_t>(s)] = partial[static_cast<size_t>(s) * cols + c];
    out[c] = tree_sum(column.data(), sublanes);
  }
}

}  // namespace tessera::numerics
