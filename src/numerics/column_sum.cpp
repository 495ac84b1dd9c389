#include "numerics/column_sum.h"

namespace tessera::numerics {

void column_sum(const float* x, int rows, int cols, int ld, float* out, int sublanes) {
  column_sum_of(
      rows, cols, out, [&](long r, int c) { return x[r * ld + c]; }, sublanes);
}

}  // namespace tessera::numerics
