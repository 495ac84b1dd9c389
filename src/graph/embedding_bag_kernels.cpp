#include "graph/embedding_bag_kernels.h"

#include <algorithm>
#include <string>

#include "common/error.h"

namespace tessera::graph::kernels {

using numerics::Combiner;

namespace {

// Checks the offsets and the ids they cover.
void check_bags(const BagShape& s, const char* op) {
  if (s.offsets[0] != 0)
    throw Error(op, "offsets[0] is " + std::to_string(s.offsets[0]) + ", not 0");
  for (long b = 0; b < s.bags; ++b)
    if (s.offsets[b + 1] < s.offsets[b] || s.offsets[b + 1] > s.n)
      throw Error(op, "offsets[" + std::to_string(b + 1) +
                          "] = " + std::to_string(s.offsets[b + 1]) + " is below offsets[" +
                          std::to_string(b) + "] or past the " + std::to_string(s.n) + " ids");
  for (long i = 0; i < s.offsets[s.bags]; ++i)
    if (s.ids[i] < 0 || s.ids[i] >= s.rows)
      throw Error(op, "id " + std::to_string(s.ids[i]) + " at position " + std::to_string(i) +
                          " is outside [0, " + std::to_string(s.rows) + ")");
}

}  // namespace

template <typename T>
void embedding_bag(const BagShape& s, const T* table, T* y, Combiner c) {
  check_bags(s, "embedding_bag");
  const long D = s.dim;
  const long out_rows = c == Combiner::None ? s.n : s.bags;
  std::fill(y, y + out_rows * D, T(0));
  for (long b = 0; b < s.bags; ++b) {
    const long first = s.offsets[b], end = s.offsets[b + 1];
    for (long i = first; i < end; ++i) {
      T* out = y + (c == Combiner::None ? i : b) * D;
      numerics::bag_accumulate(out, table + static_cast<long>(s.ids[i]) * D, D);
    }
    if (c != Combiner::None) numerics::bag_finish(y + b * D, D, end - first, c);
  }
}

template <typename T>
void embedding_bag_grad(const BagShape& s, const T* dy, T* out, Combiner c) {
  check_bags(s, "embedding_bag_grad");
  const long D = s.dim;
  std::fill(out, out + s.rows * D, T(0));
  for (long b = 0; b < s.bags; ++b) {
    const long first = s.offsets[b], end = s.offsets[b + 1];
    for (long i = first; i < end; ++i)
      numerics::bag_scatter(out + static_cast<long>(s.ids[i]) * D,
                            dy + (c == Combiner::None ? i : b) * D, D, end - first, c);
  }
}

template void embedding_bag<float>(const BagShape&, const float*, float*, Combiner);
template void embedding_bag<double>(const BagShape&, const double*, double*, Combiner);
template void embedding_bag_grad<float>(const BagShape&, const float*, float*, Combiner);
template void embedding_bag_grad<double>(const BagShape&, const double*, double*, Combiner);

}  // namespace tessera::graph::kernels
