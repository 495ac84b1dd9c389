#include "numerics/reduce.h"

#include <cmath>
#include <limits>
#include <vector>

namespace tessera::numerics {

float fmax_ieee(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
  if (a == b) return std::signbit(a) ? b : a;  // +0 beats -0
  return a > b ? a : b;
}

float fmin_ieee(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
  if (a == b) return std::signbit(a) ? a : b;  // -0 beats +0
  return a < b ? a : b;
}

namespace {

template <typename Op>
float tree_reduce(const float* x, int n, float identity, Op op) {
  int width = 1;
  while (width < n) width *= 2;
  float buf[1024];
  std::vector<float> heap;
  float* v = buf;
  if (width > 1024) {
    heap.resize(width);
    v = heap.data();
  }
  for (int i = 0; i < width; ++i) v[i] = i < n ? x[i] : identity;
  for (int half = width / 2; half >= 1; half /= 2)
    for (int i = 0; i < half; ++i) v[i] = op(v[2 * i], v[2 * i + 1]);
  return width == 0 ? identity : v[0];
}

}  // namespace

float tree_sum(const float* x, int n) {
  if (n <= 0) return 0.0f;
  return tree_reduce(x, n, 0.0f, [](float a, float b) { return a + b; });
}

float tree_max(const float* x, int n) {
  if (n <= 0) return -std::numeric_limits<float>::infinity();
  return tree_reduce(x, n, -std::numeric_limits<float>::infinity(), fmax_ieee);
}

}  // namespace tessera::numerics
