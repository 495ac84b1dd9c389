#include "graph/kernels.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

#include "common/error.h"
#include "numerics/bf16.h"
#include "numerics/column_sum.h"
#include "numerics/eup.h"
#include "numerics/matmul.h"
#include "numerics/reduce.h"

extern "C" void openblas_set_num_threads(int num_threads);

namespace tessera::graph {

const char* numerics_name(Numerics n) {
  switch (n) {
    case Numerics::kF64:
      return "f64";
    case Numerics::kF32:
      return "f32";
    case Numerics::kChip:
      return "chip";
  }
  return "?";
}

namespace kernels {

namespace {

template <typename T>
void matmul_naive(const T* a, const T* b, T* c, int M, int K, int N) {
  std::fill(c, c + static_cast<long>(M) * N, T(0));
  for (int m = 0; m < M; ++m) {
    T* row = c + static_cast<long>(m) * N;
    for (int k = 0; k < K; ++k) {
      const T av = a[static_cast<long>(m) * K + k];
      const T* brow = b + static_cast<long>(k) * N;
      for (int n = 0; n < N; ++n) row[n] = row[n] + av * brow[n];
    }
  }
}

void blas_single_thread() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

void check_label(int32_t label, int C, int b) {
  if (label < 0 || label >= C)
    throw Error("softmax_cross_entropy", "label " + std::to_string(label) + " of sample " +
                                             std::to_string(b) + " is outside [0, " +
                                             std::to_string(C) + ")");
}

}  // namespace

void Matmul::operator()(const double* a, const double* b, double* c, int M, int K, int N) const {
  matmul_naive(a, b, c, M, K, N);
}

void Matmul::operator()(const float* a, const float* b, float* c, int M, int K, int N) const {
  if (mode == Numerics::kChip) {
    std::vector<float> ar(a, a + static_cast<long>(M) * K), br(b, b + static_cast<long>(K) * N);
    numerics::round_to_bf16(ar.data(), static_cast<long>(ar.size()));
    numerics::round_to_bf16(br.data(), static_cast<long>(br.size()));
    std::fill(c, c + static_cast<long>(M) * N, 0.0f);
    numerics::mxu_matmul_accumulate(ar.data(), K, br.data(), N, c, N, M, K, N);
  } else if (use_blas && M > 0 && N > 0 && K > 0) {
    blas_single_thread();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a, K, b, N, 0.0f, c, N);
  } else {
    matmul_naive(a, b, c, M, K, N);
  }
}

void Matmul::transposed_a(const double* a, const double* b, double* c, int M, int K, int N) const {
  std::vector<double> at(static_cast<size_t>(M) * K);
  transpose(a, at.data(), K, M);
  (*this)(at.data(), b, c, M, K, N);
}

void Matmul::transposed_a(const float* a, const float* b, float* c, int M, int K, int N) const {
  if (mode == Numerics::kF32 && use_blas && M > 0 && N > 0 && K > 0) {
    blas_single_thread();
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, M, N, K, 1.0f, a, M, b, N, 0.0f, c, N);
    return;
  }
  std::vector<float> at(static_cast<size_t>(M) * K);
  transpose(a, at.data(), K, M);
  (*this)(at.data(), b, c, M, K, N);
}

template <typename T>
void add_broadcast(const T* a, const T* b, T* out, long n, long nb) {
  for (long row = 0; row < n; row += nb)
    for (long j = 0; j < nb; ++j) out[row + j] = a[row + j] + b[j];
}

template <typename T>
void relu(const T* x, T* out, long n, Numerics mode) {
  if constexpr (std::is_same_v<T, float>) {
    if (mode == Numerics::kChip) {
      for (long i = 0; i < n; ++i) out[i] = numerics::fmax_ieee(x[i], 0.0f);
      return;
    }
  }
  for (long i = 0; i < n; ++i) out[i] = x[i] > T(0) ? x[i] : T(0);
}

template <typename T>
void relu_grad(const T* dy, const T* x, T* out, long n) {
  for (long i = 0; i < n; ++i) out[i] = x[i] > T(0) ? dy[i] : T(0);
}

// Blocked 32 x 32 so both sides stay in cache.
template <typename T>
void transpose(const T* x, T* out, int rows, int cols) {
  constexpr int kBlock = 32;
  for (int r0 = 0; r0 < rows; r0 += kBlock)
    for (int c0 = 0; c0 < cols; c0 += kBlock) {
      const int r1 = std::min(rows, r0 + kBlock), c1 = std::min(cols, c0 + kBlock);
      for (int r = r0; r < r1; ++r)
        for (int c = c0; c < c1; ++c)
          out[static_cast<long>(c) * rows + r] = x[static_cast<long>(r) * cols + c];
    }
}

template <typename T>
void reduce_rows(const T* x, T* out, long rows, int cols, Numerics mode) {
  if constexpr (std::is_same_v<T, float>) {
    if (mode == Numerics::kChip) {
      numerics::column_sum(x, static_cast<int>(rows), cols, cols, out);
      return;
    }
  }
  std::fill(out, out + cols, T(0));
  for (long r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) out[c] = out[c] + x[r * cols + c];
}

namespace {

// Per-row softmax pieces: max m, exponentials e[C] (of x - m) and their sum s.
template <typename T>
void softmax_row(const T* x, int C, Numerics mode, T* e, T& m, T& s) {
  if constexpr (std::is_same_v<T, float>) {
    if (mode == Numerics::kChip) {
      m = numerics::tree_max(x, C);
      for (int c = 0; c < C; ++c) e[c] = numerics::eup_exp(x[c] - m);
      s = numerics::tree_sum(e, C);
      return;
    }
  }
  m = x[0];
  for (int c = 1; c < C; ++c) m = x[c] > m ? x[c] : m;
  s = T(0);
  for (int c = 0; c < C; ++c) {
    e[c] = std::exp(x[c] - m);
    s = s + e[c];
  }
}

template <typename T>
T log_of(T s, Numerics mode) {
  if constexpr (std::is_same_v<T, float>)
    if (mode == Numerics::kChip) return numerics::eup_log(s);
  return std::log(s);
}

}  // namespace

template <typename T>
void softmax_xent(const T* logits, const int32_t* labels, T* loss, int B, int C, Numerics mode) {
  std::vector<T> e(C), per_sample(B);
  for (int b = 0; b < B; ++b) {
    check_label(labels[b], C, b);
    const T* x = logits + static_cast<long>(b) * C;
    T m, s;
    softmax_row(x, C, mode, e.data(), m, s);
    const T shifted = x[labels[b]] - m;
    per_sample[b] = log_of(s, mode) - shifted;
  }
  T total;
  reduce_rows(per_sample.data(), &total, B, 1, mode);
  const T inv_b = T(1) / static_cast<T>(B);
  loss[0] = total * inv_b;
}

template <typename T>
void softmax_xent_grad(const T* logits, const int32_t* labels, T dloss, T* out, int B, int C,
                       Numerics mode) {
  std::vector<T> e(C);
  const T g = dloss * (T(1) / static_cast<T>(B));
  for (int b = 0; b < B; ++b) {
    check_label(labels[b], C, b);
    const T* x = logits + static_cast<long>(b) * C;
    T* d = out + static_cast<long>(b) * C;
    T m, s;
    softmax_row(x, C, mode, e.data(), m, s);
    T r = T(0);
    if constexpr (std::is_same_v<T, float>)
      if (mode == Numerics::kChip) r = numerics::eup_rcp(s);
    for (int c = 0; c < C; ++c) {
      const T p = mode == Numerics::kChip ? e[c] * r : e[c] / s;
      const T diff = p - (c == labels[b] ? T(1) : T(0));
      d[c] = diff * g;
    }
  }
}

#define TESSERA_INSTANTIATE(T)                                                     \
  template void add_broadcast<T>(const T*, const T*, T*, long, long);              \
  template void relu<T>(const T*, T*, long, Numerics);                             \
  template void relu_grad<T>(const T*, const T*, T*, long);                        \
  template void transpose<T>(const T*, T*, int, int);                              \
  template void reduce_rows<T>(const T*, T*, long, int, Numerics);                 \
  template void softmax_xent<T>(const T*, const int32_t*, T*, int, int, Numerics); \
  template void softmax_xent_grad<T>(const T*, const int32_t*, T, T*, int, int, Numerics);
TESSERA_INSTANTIATE(float)
TESSERA_INSTANTIATE(double)
#undef TESSERA_INSTANTIATE

}  // namespace kernels
}  // namespace tessera::graph
