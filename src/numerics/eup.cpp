#include "numerics/eup.h"

#include <cmath>

namespace tessera::numerics {

float eup_exp(float x) {
  return static_cast<float>(std::exp(static_cast<double>(x)));
}
float eup_log(float x) {
  return static_cast<float>(std::log(static_cast<double>(x)));
}
float eup_rcp(float x) {
  return static_cast<float>(1.0 / static_cast<double>(x));
}
float eup_rsqrt(float x) {
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(x)));
}
float eup_sqrt(float x) {
  return static_cast<float>(std::sqrt(static_cast<double>(x)));
}
float eup_tanh(float x) {
  return static_cast<float>(std::tanh(static_cast<double>(x)));
}

namespace {

template <typename F>
void apply(F f, const float* in, float* out, long n) {
  for (long i = 0; i < n; ++i) out[i] = f(in[i]);
}

}  // namespace

void eup_apply(EupFunc f, const float* in, float* out, long n) {
  switch (f) {
    case EupFunc::Exp:
      apply(eup_exp, in, out, n);
      return;
    case EupFunc::Log:
      apply(eup_log, in, out, n);
      return;
    case EupFunc::Rcp:
      apply(eup_rcp, in, out, n);
      return;
    case EupFunc::Rsqrt:
      apply(eup_rsqrt, in, out, n);
      return;
    case EupFunc::Sqrt:
      apply(eup_sqrt, in, out, n);
      return;
    case EupFunc::Tanh:
      apply(eup_tanh, in, out, n);
      return;
  }
}

}  // namespace tessera::numerics
