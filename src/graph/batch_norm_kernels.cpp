#include "graph/batch_norm_kernels.h"

#include <algorithm>

namespace tessera::graph::kernels {

template <typename T>
void batch_norm(const T* x, const T* mean, const T* inv_sd, const T* gamma, const T* beta, T* y,
                long rows, int C) {
  for (long r = 0; r < rows; ++r)
    for (int c = 0; c < C; ++c) {
      const T a = gamma[c] * inv_sd[c];
      const T centred = x[r * C + c] - mean[c];
      const T scaled = centred * a;
      y[r * C + c] = scaled + beta[c];
    }
}

template <typename T>
void channel_squares(const T* x, const T* mean, T* out, long rows, int C) {
  std::fill(out, out + C, T(0));
  for (long r = 0; r < rows; ++r)
    for (int c = 0; c < C; ++c) {
      const T centred = x[r * C + c] - mean[c];
      const T square = centred * centred;
      out[c] = out[c] + square;
    }
}

template <typename T>
void channel_dot(const T* u, const T* x, const T* mean, T* out, long rows, int C) {
  std::fill(out, out + C, T(0));
  for (long r = 0; r < rows; ++r)
    for (int c = 0; c < C; ++c) {
      const T centred = x[r * C + c] - mean[c];
      const T product = u[r * C + c] * centred;
      out[c] = out[c] + product;
    }
}

template <typename T>
void batch_norm_grad(const T* dy, const T* x, const T* mean, const T* k_dy, const T* k_x,
                     const T* k, T* dx, long rows, int C) {
  for (long r = 0; r < rows; ++r)
    for (int c = 0; c < C; ++c) {
      const long i = r * C + c;
      const T from_dy = dy[i] * k_dy[c];
      const T centred = x[i] - mean[c];
      const T from_x = centred * k_x[c];
      const T sum = from_dy + from_x;
      dx[i] = sum + k[c];
    }
}

#define TESSERA_INSTANTIATE(T)                                                                  \
  template void batch_norm(const T*, const T*, const T*, const T*, const T*, T*, long, int);    \
  template void channel_squares(const T*, const T*, T*, long, int);                             \
  template void channel_dot(const T*, const T*, const T*, T*, long, int);                       \
  template void batch_norm_grad(const T*, const T*, const T*, const T*, const T*, const T*, T*, \
                                long, int);
TESSERA_INSTANTIATE(float)
TESSERA_INSTANTIATE(double)
#undef TESSERA_INSTANTIATE

}  // namespace tessera::graph::kernels
