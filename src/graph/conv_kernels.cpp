// Convolution and max-pooling kernels (NHWC activations, HWIO weights); see kernels.h for the
// im2col formulation and the K orders it fixes.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "graph/kernels.h"

namespace tessera::graph::kernels {

namespace {

// A per-thread scratch buffer of at least n elements (slot: which of the kernel's buffers), reused
// across calls so large buffers do not page-fault on every step; its contents are left as they
// are.
template <typename T>
T* scratch(int slot, size_t n) {
  thread_local std::vector<T> buffers[2];
  std::vector<T>& b = buffers[slot];
  if (b.size() < n) b.resize(n);
  return b.data();
}

// Rows [m0, m1) of cols[(n, oh, ow), (kh, kw, ci)] of x[N, H, W, Ci] into out (row m at
// out + (m - m0) * K); out-of-image taps are zero. Every element is written.
template <typename T>
void im2col_rows(const T* x, const ConvGeom& g, long m0, long m1, T* out) {
  const long K = static_cast<long>(g.kh) * g.kw * g.ci;
  for (long m = m0; m < m1; ++m, out += K) {
    const int ow = static_cast<int>(m % g.ow), oh = static_cast<int>(m / g.ow % g.oh);
    const long n = m / (static_cast<long>(g.ow) * g.oh);
    T* dst = out;
    for (int kh = 0; kh < g.kh; ++kh) {
      const int h = oh * g.stride - g.pad + kh;
      for (int kw = 0; kw < g.kw; ++kw, dst += g.ci) {
        const int w = ow * g.stride - g.pad + kw;
        if (h < 0 || h >= g.h || w < 0 || w >= g.w) {
          std::fill(dst, dst + g.ci, T(0));
        } else {
          const T* src = x + ((n * g.h + h) * g.w + w) * g.ci;
          std::copy(src, src + g.ci, dst);
        }
      }
    }
  }
}

// Output rows per im2col block of the forward convolution (K x N the matmul's other sizes): about
// 512 Ki elements of the matrix (2 MiB of floats, so a block stays in the cache between im2col and
// the matmul), at least 2 Mi multiply-adds (OpenBLAS computes products of at most 1e6 (M N K) with
// other kernels, whose sums differ, so every block stays above that), and a multiple of
// kPanelRows. OpenBLAS's sgemm takes the rows in panels of its kernel's unroll (16 with the AVX2
// kernels, 24 with the AVX-512 ones) and the last rows of a matrix through narrower kernels whose
// sums differ; a block that starts on a panel boundary of the whole matrix puts every row in the
// same panel as one matmul would.
long block_rows(long K, long N) {
  constexpr long kBlockElements = long{1} << 19, kLeastMacs = long{1} << 21;
  constexpr long kPanelRows = 192;  // a multiple of every unroll in use (16, 24, 32, 48, 64, 96)
  const long kn = std::max<long>(K * N, 1);
  const long rows = std::max(kBlockElements / std::max<long>(K, 1), (kLeastMacs + kn - 1) / kn);
  return (rows + kPanelRows - 1) / kPanelRows * kPanelRows;
}

}  // namespace

// A block of output rows of y depends only on the same rows of im2col(x), so the matmul runs block
// by block on an im2col block that stays in the cache; each row's sums are the same as with one
// matmul over all rows (block_rows).
template <typename T>
void conv2d(const T* x, const T* w, T* y, const ConvGeom& g, const Matmul& mm) {
  const long M = static_cast<long>(g.n) * g.oh * g.ow, K = static_cast<long>(g.kh) * g.kw * g.ci;
  const long rows = block_rows(K, g.co);
  // A last block shorter than `rows` joins the one before it.
  T* cols = scratch<T>(0, static_cast<size_t>(std::min(M, 2 * rows - 1) * K));
  for (long m0 = 0, m1; m0 < M; m0 = m1) {
    m1 = M - m0 < 2 * rows ? M : m0 + rows;
    im2col_rows(x, g, m0, m1, cols);
    mm(cols, w, y + m0 * g.co, static_cast<int>(m1 - m0), static_cast<int>(K), g.co);
  }
}

template <typename T>
void conv2d_input_grad(const T* dy, const T* w, T* dx, const ConvGeom& g, const Matmul& mm) {
  // e[N, H+KH-1, W+KW-1, Co]: dy zero-dilated by the stride, placed at offset KH-1-pad.
  const int eh = g.h + g.kh - 1, ew = g.w + g.kw - 1;
  const size_t e_size = static_cast<size_t>(g.n) * eh * ew * g.co;
  T* e = scratch<T>(1, e_size);
  std::fill(e, e + e_size, T(0));
  for (int n = 0; n < g.n; ++n)
    for (int oh = 0; oh < g.oh; ++oh) {
      const int j = oh * g.stride + g.kh - 1 - g.pad;
      if (j < 0 || j >= eh) continue;
      for (int ow = 0; ow < g.ow; ++ow) {
        const int l = ow * g.stride + g.kw - 1 - g.pad;
        if (l < 0 || l >= ew) continue;
        const T* src = dy + ((static_cast<long>(n) * g.oh + oh) * g.ow + ow) * g.co;
        T* dst = e + ((static_cast<long>(n) * eh + j) * ew + l) * g.co;
        for (int c = 0; c < g.co; ++c) dst[c] = src[c];
      }
    }
  // wf[kh', kw', co, ci] = w[KH-1-kh', KW-1-kw', ci, co]
  std::vector<T> wf(static_cast<size_t>(g.kh) * g.kw * g.co * g.ci);
  for (int kh = 0; kh < g.kh; ++kh)
    for (int kw = 0; kw < g.kw; ++kw)
      for (int co = 0; co < g.co; ++co)
        for (int ci = 0; ci < g.ci; ++ci)
          wf[((static_cast<size_t>(kh) * g.kw + kw) * g.co + co) * g.ci + ci] =
              w[((static_cast<size_t>(g.kh - 1 - kh) * g.kw + (g.kw - 1 - kw)) * g.ci + ci) * g.co +
                co];
  const ConvGeom full{g.n, eh, ew, g.co, g.kh, g.kw, g.ci, 1, 0, g.h, g.w};
  conv2d(e, wf.data(), dx, full, mm);
}

template <typename T>
void conv2d_weight_grad(const T* x, const T* dy, T* dw, const ConvGeom& g, const Matmul& mm) {
  const long M = static_cast<long>(g.n) * g.oh * g.ow, K = static_cast<long>(g.kh) * g.kw * g.ci;
  T* cols = scratch<T>(0, static_cast<size_t>(M * K));
  im2col_rows(x, g, 0, M, cols);
  mm.transposed_a(cols, dy, dw, static_cast<int>(K), static_cast<int>(M), g.co);
}

namespace {

// For every channel c of output (n, oh, ow): the index (into x) of the first maximum, in (kh, kw)
// order, of its window, into best[0, Ci).
template <typename T>
void window_argmax(const T* x, const ConvGeom& g, int n, int oh, int ow, long* best) {
  thread_local std::vector<T> top;
  top.resize(static_cast<size_t>(g.ci));
  for (int kh = 0; kh < g.kh; ++kh)
    for (int kw = 0; kw < g.kw; ++kw) {
      const int h = oh * g.stride + kh, w = ow * g.stride + kw;
      const long i = ((static_cast<long>(n) * g.h + h) * g.w + w) * g.ci;
      const bool first = kh == 0 && kw == 0;
      for (int c = 0; c < g.ci; ++c)
        if (first || x[i + c] > top[static_cast<size_t>(c)]) {
          top[static_cast<size_t>(c)] = x[i + c];
          best[c] = i + c;
        }
    }
}

// Calls f(dy/y offset, best) for every output position, best as window_argmax gives it.
template <typename T, typename F>
void for_each_window(const T* x, const ConvGeom& g, F&& f) {
  thread_local std::vector<long> best;
  best.resize(static_cast<size_t>(g.ci));
  long at = 0;
  for (int n = 0; n < g.n; ++n)
    for (int oh = 0; oh < g.oh; ++oh)
      for (int ow = 0; ow < g.ow; ++ow, at += g.ci) {
        window_argmax(x, g, n, oh, ow, best.data());
        f(at, best.data());
      }
}

}  // namespace

template <typename T>
void maxpool2d(const T* x, T* y, const ConvGeom& g) {
  for_each_window(x, g, [&](long at, const long* best) {
    for (int c = 0; c < g.ci; ++c) y[at + c] = x[best[c]];
  });
}

// Each dx element gathers its dy terms in (n, oh, ow) order, as one output position at a time.
template <typename T>
void maxpool2d_grad(const T* dy, const T* x, T* dx, const ConvGeom& g) {
  std::fill(dx, dx + static_cast<long>(g.n) * g.h * g.w * g.ci, T(0));
  for_each_window(x, g, [&](long at, const long* best) {
    for (int c = 0; c < g.ci; ++c) dx[best[c]] = dx[best[c]] + dy[at + c];
  });
}

#define TESSERA_INSTANTIATE(T)                                                                 \
  template void conv2d<T>(const T*, const T*, T*, const ConvGeom&, const Matmul&);             \
  template void conv2d_input_grad<T>(const T*, const T*, T*, const ConvGeom&, const Matmul&);  \
  template void conv2d_weight_grad<T>(const T*, const T*, T*, const ConvGeom&, const Matmul&); \
  template void maxpool2d<T>(const T*, T*, const ConvGeom&);                                   \
  template void maxpool2d_grad<T>(const T*, const T*, T*, const ConvGeom&);
TESSERA_INSTANTIATE(float)
TESSERA_INSTANTIATE(double)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::graph::kernels
