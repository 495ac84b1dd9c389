// The transformer ops' host kernels; transformer_kernels.h defines their arithmetic.
#include "graph/transformer_kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "common/error.h"
#include "numerics/eup.h"
#include "numerics/philox.h"
#include "numerics/reduce.h"

namespace tessera::graph::kernels {

namespace {

template <typename T>
constexpr bool chip(Numerics mode) {
  return std::is_same_v<T, float> && mode == Numerics::kChip;
}

// Sum of n values: the reduce unit's tree in chip numerics, index order otherwise.
template <typename T>
T row_sum(const T* v, int n, Numerics mode) {
  if constexpr (std::is_same_v<T, float>)
    if (mode == Numerics::kChip) return numerics::tree_sum(v, n);
  T s = T(0);
  for (int i = 0; i < n; ++i) s = s + v[i];
  return s;
}

template <typename T>
T row_max(const T* v, int n, Numerics mode) {
  if constexpr (std::is_same_v<T, float>)
    if (mode == Numerics::kChip) return numerics::tree_max(v, n);
  T m = v[0];
  for (int i = 1; i < n; ++i) m = v[i] > m ? v[i] : m;
  return m;
}

template <typename T>
T eup_or_host(numerics::EupFunc f, T x, Numerics mode) {
  if constexpr (std::is_same_v<T, float>) {
    if (mode == Numerics::kChip) {
      float y;
      numerics::eup_apply(f, &x, &y, 1);
      return y;
    }
  }
  switch (f) {
    case numerics::EupFunc::Exp:
      return std::exp(x);
    case numerics::EupFunc::Rsqrt:
      return T(1) / std::sqrt(x);
    case numerics::EupFunc::Rcp:
      return T(1) / x;
    case numerics::EupFunc::Tanh:
      return std::tanh(x);
    default:
      TESSERA_CHECK(false, "eup_or_host: unused function");
  }
  return x;
}

// Per row: c = x - mean (into c) and r = 1 / sqrt(var + eps).
template <typename T>
T center_row(const T* x, T* c, int D, double eps, Numerics mode) {
  const T inv_d = T(1) / static_cast<T>(D);
  const T mean = row_sum(x, D, mode) * inv_d;
  std::vector<T> sq(static_cast<size_t>(D));
  for (int j = 0; j < D; ++j) {
    c[j] = x[j] - mean;
    sq[j] = c[j] * c[j];
  }
  const T var = row_sum(sq.data(), D, mode) * inv_d;
  return eup_or_host(numerics::EupFunc::Rsqrt, var + static_cast<T>(eps), mode);
}

// The normalized rows xhat of x [rows, D].
template <typename T>
std::vector<T> normalized(const T* x, long rows, int D, double eps, Numerics mode) {
  std::vector<T> xhat(static_cast<size_t>(rows) * D);
  for (long i = 0; i < rows; ++i) {
    T* c = xhat.data() + i * D;
    const T r = center_row(x + i * D, c, D, eps, mode);
    for (int j = 0; j < D; ++j) c[j] = c[j] * r;
  }
  return xhat;
}

constexpr double kGeluC = 0.7978845608028654;  // sqrt(2 / pi)

}  // namespace

void check_id(int32_t id, int V, long i) {
  if (id < 0 || id >= V)
    throw Error("embedding", "id " + std::to_string(id) + " at position " + std::to_string(i) +
                                 " is outside [0, " + std::to_string(V) + ")");
}

template <typename T>
void embedding(const T* table, const int32_t* ids, T* y, long n, int V, int D) {
  for (long i = 0; i < n; ++i) {
    check_id(ids[i], V, i);
    std::copy_n(table + static_cast<long>(ids[i]) * D, D, y + i * D);
  }
}

template <typename T>
void embedding_grad(const T* dy, const int32_t* ids, T* out, long n, int V, int D) {
  std::fill(out, out + static_cast<long>(V) * D, T(0));
  for (long i = 0; i < n; ++i) {
    check_id(ids[i], V, i);
    T* row = out + static_cast<long>(ids[i]) * D;
    for (int j = 0; j < D; ++j) row[j] = row[j] + dy[i * D + j];
  }
}

template <typename T>
void layer_norm(const T* x, const T* gain, const T* bias, T* y, long rows, int D, double eps,
                Numerics mode) {
  const std::vector<T> xhat = normalized(x, rows, D, eps, mode);
  for (long i = 0; i < rows; ++i)
    for (int j = 0; j < D; ++j) y[i * D + j] = xhat[i * D + j] * gain[j] + bias[j];
}

template <typename T>
void layer_norm_grad(const T* dy, const T* x, const T* gain, T* dx, long rows, int D, double eps,
                     Numerics mode) {
  const T inv_d = T(1) / static_cast<T>(D);
  std::vector<T> xhat(static_cast<size_t>(D)), g(static_cast<size_t>(D)), gx(g.size());
  for (long i = 0; i < rows; ++i) {
    const T r = center_row(x + i * D, xhat.data(), D, eps, mode);
    for (int j = 0; j < D; ++j) {
      xhat[j] = xhat[j] * r;
      g[j] = dy[i * D + j] * gain[j];
      gx[j] = g[j] * xhat[j];
    }
    const T a = row_sum(g.data(), D, mode) * inv_d;
    const T b = row_sum(gx.data(), D, mode) * inv_d;
    for (int j = 0; j < D; ++j) dx[i * D + j] = (g[j] - a - xhat[j] * b) * r;
  }
}

template <typename T>
void layer_norm_gain_grad(const T* dy, const T* x, T* out, long rows, int D, double eps,
                          Numerics mode) {
  std::vector<T> prod = normalized(x, rows, D, eps, mode);
  for (size_t k = 0; k < prod.size(); ++k) prod[k] = dy[k] * prod[k];
  reduce_rows(prod.data(), out, rows, D, mode);
}

template <typename T>
void gelu(const T* x, T* y, long n, Numerics mode) {
  const T c = static_cast<T>(kGeluC), k = static_cast<T>(0.044715), half = static_cast<T>(0.5);
  for (long i = 0; i < n; ++i) {
    const T u = x[i] + k * (x[i] * x[i] * x[i]);
    const T t = eup_or_host(numerics::EupFunc::Tanh, c * u, mode);
    y[i] = (half * x[i]) * (T(1) + t);
  }
}

template <typename T>
void gelu_grad(const T* dy, const T* x, T* dx, long n, Numerics mode) {
  const T c = static_cast<T>(kGeluC), k = static_cast<T>(0.044715), half = static_cast<T>(0.5);
  const T k3 = static_cast<T>(3 * 0.044715);
  for (long i = 0; i < n; ++i) {
    const T u = x[i] + k * (x[i] * x[i] * x[i]);
    const T t = eup_or_host(numerics::EupFunc::Tanh, c * u, mode);
    const T du = c * (T(1) + k3 * (x[i] * x[i]));
    const T s = T(1) - t * t;
    dx[i] = dy[i] * ((half * (T(1) + t)) + (half * x[i]) * (s * du));
  }
}

template <typename T>
void softmax(const T* x, T* y, long batches, int S, int T_, bool causal, Numerics mode) {
  std::vector<T> row(static_cast<size_t>(T_));
  for (long b = 0; b < batches; ++b)
    for (int s = 0; s < S; ++s) {
      const long at = (b * S + s) * static_cast<long>(T_);
      const int valid = causal ? std::min(T_, s + T_ - S + 1) : T_;
      std::copy_n(x + at, T_, row.data());
      std::fill(row.begin() + valid, row.end(), -std::numeric_limits<T>::infinity());
      const T m = row_max(row.data(), chip<T>(mode) ? T_ : valid, mode);
      for (int t = 0; t < T_; ++t)
        row[t] = t < valid ? eup_or_host(numerics::EupFunc::Exp, row[t] - m, mode) : T(0);
      const T z = row_sum(row.data(), T_, mode);
      const T rz = chip<T>(mode) ? eup_or_host(numerics::EupFunc::Rcp, z, mode) : T(0);
      for (int t = 0; t < T_; ++t) y[at + t] = chip<T>(mode) ? row[t] * rz : row[t] / z;
    }
}

template <typename T>
void softmax_grad(const T* dy, const T* y, T* dx, long rows, int T_, Numerics mode) {
  std::vector<T> prod(static_cast<size_t>(T_));
  for (long i = 0; i < rows; ++i) {
    const long at = i * T_;
    for (int t = 0; t < T_; ++t) prod[t] = dy[at + t] * y[at + t];
    const T dot = row_sum(prod.data(), T_, mode);
    for (int t = 0; t < T_; ++t) dx[at + t] = y[at + t] * (dy[at + t] - dot);
  }
}

template <typename T>
void batch_matmul(const T* a, const T* b, T* c, long batches, int M, int K, int N, bool transpose_a,
                  bool transpose_b, const Matmul& mm) {
  const long sa = static_cast<long>(M) * K, sb = static_cast<long>(K) * N;
  std::vector<T> at(transpose_a ? sa : 0), bt(transpose_b ? sb : 0);
  for (long i = 0; i < batches; ++i) {
    const T* ap = a + i * sa;
    const T* bp = b + i * sb;
    if (transpose_a) transpose(ap, at.data(), K, M);
    if (transpose_b) transpose(bp, bt.data(), N, K);
    mm(transpose_a ? at.data() : ap, transpose_b ? bt.data() : bp, c + i * M * N, M, K, N);
  }
}

template <typename T>
void permute(const T* x, T* y, const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  const size_t r = dims.size();
  std::vector<int64_t> stride(r, 1);  // x's row-major strides
  for (size_t d = r; d-- > 1;) stride[d - 1] = stride[d] * dims[d];
  std::vector<int64_t> out_dims(r), out_stride(r), idx(r, 0);
  for (size_t i = 0; i < r; ++i) {
    out_dims[i] = dims[static_cast<size_t>(perm[i])];
    out_stride[i] = stride[static_cast<size_t>(perm[i])];
  }
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  int64_t src = 0;
  for (int64_t k = 0; k < n; ++k) {
    y[k] = x[src];
    for (size_t i = r; i-- > 0;) {  // odometer over y's index, tracking x's offset
      src += out_stride[i];
      if (++idx[i] < out_dims[i]) break;
      src -= out_stride[i] * out_dims[i];
      idx[i] = 0;
    }
  }
}

template <typename T>
void mul_broadcast(const T* a, const T* b, T* out, long n, long nb) {
  for (long row = 0; row < n; row += nb)
    for (long j = 0; j < nb; ++j) out[row + j] = a[row + j] * b[j];
}

template <typename T>
void scale(const T* x, T* y, long n, double factor) {
  const T f = static_cast<T>(factor);
  for (long i = 0; i < n; ++i) y[i] = x[i] * f;
}

template <typename T>
void dropout(const T* x, T* y, long n, double rate, uint32_t seed) {
  const uint64_t threshold = static_cast<uint64_t>(std::llround(rate * 0x1.0p32));
  const T f = static_cast<T>(1.0 / (1.0 - rate));
  std::vector<uint32_t> words(static_cast<size_t>(n));
  numerics::philox_stream(seed, 0, words.data(), n);
  for (long i = 0; i < n; ++i) y[i] = words[i] >= threshold ? x[i] * f : T(0);
}

#define TESSERA_INSTANTIATE(T)                                                                     \
  template void embedding<T>(const T*, const int32_t*, T*, long, int, int);                        \
  template void embedding_grad<T>(const T*, const int32_t*, T*, long, int, int);                   \
  template void layer_norm<T>(const T*, const T*, const T*, T*, long, int, double, Numerics);      \
  template void layer_norm_grad<T>(const T*, const T*, const T*, T*, long, int, double, Numerics); \
  template void layer_norm_gain_grad<T>(const T*, const T*, T*, long, int, double, Numerics);      \
  template void gelu<T>(const T*, T*, long, Numerics);                                             \
  template void gelu_grad<T>(const T*, const T*, T*, long, Numerics);                              \
  template void softmax<T>(const T*, T*, long, int, int, bool, Numerics);                          \
  template void softmax_grad<T>(const T*, const T*, T*, long, int, Numerics);                      \
  template void batch_matmul<T>(const T*, const T*, T*, long, int, int, int, bool, bool,           \
                                const Matmul&);                                                    \
  template void permute<T>(const T*, T*, const std::vector<int64_t>&,                              \
                           const std::vector<int64_t>&);                                           \
  template void mul_broadcast<T>(const T*, const T*, T*, long, long);                              \
  template void scale<T>(const T*, T*, long, double);                                              \
  template void dropout<T>(const T*, T*, long, double, uint32_t);
TESSERA_INSTANTIATE(float)
TESSERA_INSTANTIATE(double)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::graph::kernels
