// Convolution and max-pooling kernels (NHWC activations, HWIO weights); see kernels.h for the
// im2col formulation and the K orders it fixes.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "graph/kernels.h"

namespace tessera::graph::kernels {

namespace {

// A per-thread scratch buffer of n zeros (slot: which of the kernel's buffers), reused across
// calls so large im2col matrices do not page-fault on every step.
template <typename T>
std::vector<T>& scratch_zeros(int slot, size_t n) {
  thread_local std::vector<T> buffers[2];
  std::vector<T>& b = buffers[slot];
  b.assign(n, T(0));
  return b;
}

// cols[(n, oh, ow), (kh, kw, ci)] of x[N, H, W, Ci]; out-of-image taps are zero.
template <typename T>
const std::vector<T>& im2col(const T* x, const ConvGeom& g) {
  const long K = static_cast<long>(g.kh) * g.kw * g.ci;
  std::vector<T>& cols = scratch_zeros<T>(0, static_cast<size_t>(g.n) * g.oh * g.ow * K);
  T* out = cols.data();
  for (int n = 0; n < g.n; ++n)
    for (int oh = 0; oh < g.oh; ++oh)
      for (int ow = 0; ow < g.ow; ++ow, out += K)
        for (int kh = 0; kh < g.kh; ++kh) {
          const int h = oh * g.stride - g.pad + kh;
          if (h < 0 || h >= g.h) continue;
          for (int kw = 0; kw < g.kw; ++kw) {
            const int w = ow * g.stride - g.pad + kw;
            if (w < 0 || w >= g.w) continue;
            const T* src = x + ((static_cast<long>(n) * g.h + h) * g.w + w) * g.ci;
            T* dst = out + (static_cast<long>(kh) * g.kw + kw) * g.ci;
            for (int c = 0; c < g.ci; ++c) dst[c] = src[c];
          }
        }
  return cols;
}

}  // namespace

template <typename T>
void conv2d(const T* x, const T* w, T* y, const ConvGeom& g, const Matmul& mm) {
  const std::vector<T>& cols = im2col(x, g);
  mm(cols.data(), w, y, g.n * g.oh * g.ow, g.kh * g.kw * g.ci, g.co);
}

template <typename T>
void conv2d_input_grad(const T* dy, const T* w, T* dx, const ConvGeom& g, const Matmul& mm) {
  // e[N, H+KH-1, W+KW-1, Co]: dy zero-dilated by the stride, placed at offset KH-1-pad.
  const int eh = g.h + g.kh - 1, ew = g.w + g.kw - 1;
  std::vector<T>& e = scratch_zeros<T>(1, static_cast<size_t>(g.n) * eh * ew * g.co);
  for (int n = 0; n < g.n; ++n)
    for (int oh = 0; oh < g.oh; ++oh) {
      const int j = oh * g.stride + g.kh - 1 - g.pad;
      if (j < 0 || j >= eh) continue;
      for (int ow = 0; ow < g.ow; ++ow) {
        const int l = ow * g.stride + g.kw - 1 - g.pad;
        if (l < 0 || l >= ew) continue;
        const T* src = dy + ((static_cast<long>(n) * g.oh + oh) * g.ow + ow) * g.co;
        T* dst = e.data() + ((static_cast<long>(n) * eh + j) * ew + l) * g.co;
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
  conv2d(e.data(), wf.data(), dx, full, mm);
}

template <typename T>
void conv2d_weight_grad(const T* x, const T* dy, T* dw, const ConvGeom& g, const Matmul& mm) {
  const std::vector<T>& cols = im2col(x, g);
  mm.transposed_a(cols.data(), dy, dw, g.kh * g.kw * g.ci, g.n * g.oh * g.ow, g.co);
}

namespace {

// Index (into x) of the first maximum, in (kh, kw) order, of the window of output (n, oh, ow, c).
template <typename T>
long window_argmax(const T* x, const ConvGeom& g, int n, int oh, int ow, int c) {
  long best = -1;
  for (int kh = 0; kh < g.kh; ++kh)
    for (int kw = 0; kw < g.kw; ++kw) {
      const int h = oh * g.stride + kh, w = ow * g.stride + kw;
      const long i = ((static_cast<long>(n) * g.h + h) * g.w + w) * g.ci + c;
      if (best < 0 || x[i] > x[best]) best = i;
    }
  return best;
}

}  // namespace

template <typename T>
void maxpool2d(const T* x, T* y, const ConvGeom& g) {
  for (int n = 0; n < g.n; ++n)
    for (int oh = 0; oh < g.oh; ++oh)
      for (int ow = 0; ow < g.ow; ++ow)
        for (int c = 0; c < g.ci; ++c) *y++ = x[window_argmax(x, g, n, oh, ow, c)];
}

template <typename T>
void maxpool2d_grad(const T* dy, const T* x, T* dx, const ConvGeom& g) {
  std::fill(dx, dx + static_cast<long>(g.n) * g.h * g.w * g.ci, T(0));
  for (int n = 0; n < g.n; ++n)
    for (int oh = 0; oh < g.oh; ++oh)
      for (int ow = 0; ow < g.ow; ++ow)
        for (int c = 0; c < g.ci; ++c) {
          const long i = window_argmax(x, g, n, oh, ow, c);
          dx[i] = dx[i] + *dy++;
        }
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
