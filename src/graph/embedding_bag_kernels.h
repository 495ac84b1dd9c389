// Host kernels of embedding_bag and embedding_bag_grad (ops.def), for double and float. The
// arithmetic is numerics/embedding_bag.h's, so float (fp32 and chip numerics) equals the sparse
// core's gather and scatter-add bit for bit.
//   embedding_bag:       bag b = ids[offsets[b], offsets[b+1]); sum/mean: y row b = the bag's rows
//                        combined in id order (an empty bag gives zeros); none: y row i = table row
//                        ids[i] for i < offsets[B], zeros after.
//   embedding_bag_grad:  out = 0; for every id position i < offsets[B] ascending: out[ids[i], :] +=
//                        its bag's dy row (none: dy row i), divided by the bag's size for mean.
// Offsets that do not start at 0, decrease or pass N, and ids outside [0, V), are errors naming
// the position.
#pragma once

#include <cstdint>

#include "numerics/embedding_bag.h"

namespace tessera::graph::kernels {

// The bags of `ids` (n entries) by `offsets` (bags + 1 entries) over a table of `rows` rows.
struct BagShape {
  const int32_t* ids;
  long n;
  const int32_t* offsets;
  long bags;
  long rows;
  int dim;
};

template <typename T>
void embedding_bag(const BagShape& s, const T* table, T* y, numerics::Combiner c);
template <typename T>
void embedding_bag_grad(const BagShape& s, const T* dy, T* out, numerics::Combiner c);

}  // namespace tessera::graph::kernels
