#include "numerics/embedding_bag.h"

namespace tessera::numerics {

std::string_view combiner_name(Combiner c) {
  switch (c) {
    case Combiner::Sum:
      return "sum";
    case Combiner::Mean:
      return "mean";
    case Combiner::None:
      return "none";
  }
  return "?";
}

void bag_accumulate(float* out, const float* row, int64_t dim) {
  for (int64_t i = 0; i < dim; ++i) out[i] += row[i];
}

void bag_finish(float* out, int64_t dim, int64_t n, Combiner c) {
  if (c != Combiner::Mean || n == 0) return;
  const auto count = static_cast<float>(n);
  for (int64_t i = 0; i < dim; ++i) out[i] /= count;
}

void bag_scatter(float* dst, const float* g, int64_t dim, int64_t n, Combiner c) {
  if (c == Combiner::Mean) {
    const auto count = static_cast<float>(n);
    for (int64_t i = 0; i < dim; ++i) dst[i] += g[i] / count;
  } else {
    for (int64_t i = 0; i < dim; ++i) dst[i] += g[i];
  }
}

}  // namespace tessera::numerics
