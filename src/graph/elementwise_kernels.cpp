#include "graph/elementwise_kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error.h"

namespace tessera::graph::kernels {

namespace {

// For every element i of `big` (row-major), the offset of the element of `small` (right-aligned,
// dims of 1 repeated) it reads or sums into.
std::vector<long> source_offsets(const std::vector<int64_t>& small,
                                 const std::vector<int64_t>& big) {
  const size_t r = big.size(), off = r - small.size();
  std::vector<long> stride(r, 0);
  long s = 1;
  for (size_t d = small.size(); d-- > 0;) {
    stride[off + d] = small[d] == 1 ? 0 : s;
    s *= static_cast<long>(small[d]);
  }
  long n = 1;
  for (int64_t d : big) n *= static_cast<long>(d);
  std::vector<long> out(static_cast<size_t>(n));
  std::vector<int64_t> idx(r, 0);
  long at = 0;
  for (long i = 0; i < n; ++i) {
    out[static_cast<size_t>(i)] = at;
    for (size_t d = r; d-- > 0;) {
      at += stride[d];
      if (++idx[d] < big[d]) break;
      at -= stride[d] * big[d];
      idx[d] = 0;
    }
  }
  return out;
}

// For every element of the slice (y_shape, row-major), the offset of its source in x.
std::vector<long> slice_offsets(const std::vector<int64_t>& x_shape,
                                const std::vector<int64_t>& starts,
                                const std::vector<int64_t>& steps,
                                const std::vector<int64_t>& y_shape) {
  const size_t r = x_shape.size();
  std::vector<long> stride(r, 1);
  for (size_t d = r; d-- > 1;) stride[d - 1] = stride[d] * static_cast<long>(x_shape[d]);
  long n = 1, at = 0;
  for (size_t d = 0; d < r; ++d) {
    n *= static_cast<long>(y_shape[d]);
    at += static_cast<long>(starts[d]) * stride[d];
  }
  std::vector<long> out(static_cast<size_t>(n));
  std::vector<int64_t> idx(r, 0);
  for (long i = 0; i < n; ++i) {
    out[static_cast<size_t>(i)] = at;
    for (size_t d = r; d-- > 0;) {
      const long step = static_cast<long>(steps[d]) * stride[d];
      at += step;
      if (++idx[d] < y_shape[d]) break;
      at -= step * y_shape[d];
      idx[d] = 0;
    }
  }
  return out;
}

}  // namespace

template <typename T>
void slice(const T* x, T* y, const std::vector<int64_t>& x_shape,
           const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
           const std::vector<int64_t>& y_shape) {
  const std::vector<long> src = slice_offsets(x_shape, starts, steps, y_shape);
  for (size_t i = 0; i < src.size(); ++i) y[i] = x[src[i]];
}

// y (x_shape) = fill, then the slice (y_shape, starts, steps) of y = x.
template <typename T>
void scatter(const T* x, T* y, const std::vector<int64_t>& x_shape,
             const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
             const std::vector<int64_t>& y_shape, T fill) {
  long n = 1;
  for (int64_t d : x_shape) n *= static_cast<long>(d);
  std::fill(y, y + n, fill);
  const std::vector<long> dst = slice_offsets(x_shape, starts, steps, y_shape);
  for (size_t i = 0; i < dst.size(); ++i) y[dst[i]] = x[i];
}

template <typename T>
void slice_grad(const T* dy, T* dx, const std::vector<int64_t>& x_shape,
                const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
                const std::vector<int64_t>& y_shape) {
  scatter(dy, dx, x_shape, starts, steps, y_shape, T(0));
}

template <typename T>
void pad(const T* x, T* y, const std::vector<int64_t>& x_shape, const std::vector<int64_t>& starts,
         const std::vector<int64_t>& y_shape, T fill) {
  scatter(x, y, y_shape, starts, std::vector<int64_t>(x_shape.size(), 1), x_shape, fill);
}

template <typename T>
void concat(const T* a, const T* b, T* out, const std::vector<int64_t>& a_shape,
            const std::vector<int64_t>& b_shape, int axis) {
  long outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= static_cast<long>(a_shape[static_cast<size_t>(d)]);
  for (size_t d = static_cast<size_t>(axis) + 1; d < a_shape.size(); ++d)
    inner *= static_cast<long>(a_shape[d]);
  const long na = static_cast<long>(a_shape[static_cast<size_t>(axis)]) * inner;
  const long nb = static_cast<long>(b_shape[static_cast<size_t>(axis)]) * inner;
  for (long o = 0; o < outer; ++o) {
    out = std::copy(a + o * na, a + (o + 1) * na, out);
    out = std::copy(b + o * nb, b + (o + 1) * nb, out);
  }
}

template <typename T>
void unary(OpKind op, const T* x, T* y, long n) {
  for (long i = 0; i < n; ++i) {
    const T v = x[i];
    switch (op) {
      case OpKind::kExp:
        y[i] = std::exp(v);
        break;
      case OpKind::kLog:
        y[i] = std::log(v);
        break;
      case OpKind::kSqrt:
        y[i] = std::sqrt(v);
        break;
      case OpKind::kReciprocal:
        y[i] = T(1) / v;
        break;
      case OpKind::kSigmoid:
        y[i] = T(1) / (T(1) + std::exp(-v));
        break;
      case OpKind::kTanh:
        y[i] = std::tanh(v);
        break;
      case OpKind::kErf:
        y[i] = std::erf(v);
        break;
      default:
        TESSERA_CHECK(false, "unary: op " + std::string(op_name(op)) + " is not elementwise");
    }
  }
}

template <typename T>
void broadcast(const T* x, T* y, const std::vector<int64_t>& small,
               const std::vector<int64_t>& big) {
  const std::vector<long> src = source_offsets(small, big);
  for (size_t i = 0; i < src.size(); ++i) y[i] = x[src[i]];
}

template <typename T>
void sum_to(const T* x, T* y, const std::vector<int64_t>& big, const std::vector<int64_t>& small) {
  long n = 1;
  for (int64_t d : small) n *= static_cast<long>(d);
  std::fill(y, y + n, T(0));
  const std::vector<long> dst = source_offsets(small, big);
  for (size_t i = 0; i < dst.size(); ++i) y[dst[i]] += x[i];
}

namespace {

// max as the vector unit's vmax.f32 (numerics::fmax_ieee) in T: NaN if either is NaN; +0 beats -0.
template <typename T>
T max_ieee(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

}  // namespace

template <typename T>
void reduce_max(const T* x, T* y, const std::vector<int64_t>& big,
                const std::vector<int64_t>& small) {
  long n = 1;
  for (int64_t d : small) n *= static_cast<long>(d);
  std::fill(y, y + n, -std::numeric_limits<T>::infinity());
  const std::vector<long> dst = source_offsets(small, big);
  for (size_t i = 0; i < dst.size(); ++i) y[dst[i]] = max_ieee(y[dst[i]], x[i]);
}

template <typename T>
void reduce_max_grad(const T* dy, const T* x, const T* y, T* dx, const std::vector<int64_t>& big,
                     const std::vector<int64_t>& small) {
  long n = 1;
  for (int64_t d : small) n *= static_cast<long>(d);
  std::vector<bool> taken(static_cast<size_t>(n), false);
  const std::vector<long> src = source_offsets(small, big);
  for (size_t i = 0; i < src.size(); ++i) {
    const auto j = static_cast<size_t>(src[i]);
    const bool first_max = !taken[j] && x[i] == y[j];
    if (first_max) taken[j] = true;
    dx[i] = first_max ? dy[j] : T(0);
  }
}

#define TESSERA_INSTANTIATE(T)                                                                     \
  template void unary<T>(OpKind, const T*, T*, long);                                              \
  template void broadcast<T>(const T*, T*, const std::vector<int64_t>&,                            \
                             const std::vector<int64_t>&);                                         \
  template void sum_to<T>(const T*, T*, const std::vector<int64_t>&, const std::vector<int64_t>&); \
  template void slice<T>(const T*, T*, const std::vector<int64_t>&, const std::vector<int64_t>&,   \
                         const std::vector<int64_t>&, const std::vector<int64_t>&);                \
  template void slice_grad<T>(const T*, T*, const std::vector<int64_t>&,                           \
                              const std::vector<int64_t>&, const std::vector<int64_t>&,            \
                              const std::vector<int64_t>&);                                        \
  template void concat<T>(const T*, const T*, T*, const std::vector<int64_t>&,                     \
                          const std::vector<int64_t>&, int);                                       \
  template void pad<T>(const T*, T*, const std::vector<int64_t>&, const std::vector<int64_t>&,     \
                       const std::vector<int64_t>&, T);                                            \
  template void reduce_max<T>(const T*, T*, const std::vector<int64_t>&,                           \
                              const std::vector<int64_t>&);                                        \
  template void reduce_max_grad<T>(const T*, const T*, const T*, T*, const std::vector<int64_t>&,  \
                                   const std::vector<int64_t>&);
TESSERA_INSTANTIATE(float)
TESSERA_INSTANTIATE(double)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::graph::kernels
