#include "numerics/column_sum.h"

#include <cstddef>
#include <vector>

#include "numerics/reduce.h"

namespace tessera::numerics {

void column_sum(const float* x, int rows, int cols, int ld, float* out, int sublanes) {
  std::vector<float> partial(static_cast<size_t>(sublanes) * cols, 0.0f);  // [s][c]
  for (int r = 0; r < rows; ++r) {
    float* p = partial.data() + static_cast<size_t>(r % sublanes) * cols;
    const float* row = x + static_cast<long>(r) * ld;
    for (int c = 0; c < cols; ++c) p[c] = p[c] + row[c];
  }
  std::vector<float> column(sublanes);
  for (int c = 0; c < cols; ++c) {
    for (int s = 0; s < sublanes; ++s) column[s] = partial[static_cast<size_t>(s) * cols + c];
    out[c] = tree_sum(column.data(), sublanes);
  }
}

}  // namespace tessera::numerics
