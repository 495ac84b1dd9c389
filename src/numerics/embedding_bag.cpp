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

template <class T>
void bag_accumulate(T* out, const T* row, int64_t dim) {
  for (int64_t i = 0; i < dim; ++i) out[i] += row[i];
}

template <class T>
void bag_finish(T* out, int64_t dim, int64_t n, Combiner c) {
  if (c != Combiner::Mean || n == 0) return;
  const auto count = static_cast<T>(n);
  for (int64_t i = 0; i < dim; ++i) out[i] /= count;
}

template <class T>
void bag_scatter(T* dst, const T* g, int64_t dim, int64_t n, Combiner c) {
  if (c == Combiner::Mean) {
    const auto count = static_cast<T>(n);
    for (int64_t i = 0; i < dim; ++i) dst[i] += g[i] / count;
  } else {
    for (int64_t i = 0; i < dim; ++i) dst[i] += g[i];
  }
}

#define TESSERA_BAG_TYPES(T)                                   \
  template void bag_accumulate<T>(T*, const T*, int64_t);      \
  template void bag_finish<T>(T*, int64_t, int64_t, Combiner); \
  template void bag_scatter<T>(T*, const T*, int64_t, int64_t, Combiner);
TESSERA_BAG_TYPES(float)
TESSERA_BAG_TYPES(double)
#undef TESSERA_BAG_TYPES

}  // namespace tessera::numerics
