// Embedding-bag arithmetic: the combiners of the sparse core's gather and scatter-add descriptors
// (core/sparse_core.h) and of the graph's embedding_bag executor (graph/embedding_bag_kernels.h),
// defined once here. A bag is a run of ids; its rows are D words each, fp32 on the chip (T = float;
// the fp64 reference runs the same steps in double).
//
// Forward (gather), per bag of n ids, element by element in T, in id order:
//   sum:  out = ((0 + r_0) + r_1) + ... + r_{n-1}     (an empty bag gives zeros)
//   mean: out = sum / n                               (an empty bag gives zeros)
//   none: one output row per id, the row itself (bags only delimit ids)
// Backward (scatter-add), the gradient one id of a bag receives from the bag's gradient g:
//   sum and none: g;  mean: g / n.
#pragma once

#include <cstdint>
#include <string_view>

namespace tessera::numerics {

enum class Combiner : uint8_t { Sum, Mean, None };

std::string_view combiner_name(Combiner c);

// out[0, dim) += row[0, dim) (one id of a sum or mean bag).
template <class T>
void bag_accumulate(T* out, const T* row, int64_t dim);
// Ends a bag of `n` ids whose rows bag_accumulate added into out (zeroed first): divides by n for
// mean (nothing for an empty bag or for sum).
template <class T>
void bag_finish(T* out, int64_t dim, int64_t n, Combiner c);
// dst[0, dim) += the gradient of one id of a bag of `n` ids whose gradient is g.
template <class T>
void bag_scatter(T* dst, const T* g, int64_t dim, int64_t n, Combiner c);

}  // namespace tessera::numerics
