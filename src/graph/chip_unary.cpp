#include "graph/chip_unary.h"

#include <cmath>
#include <string>

#include "common/error.h"
#include "numerics/eup.h"

namespace tessera::graph::kernels {

namespace {

float chip_erf(float x) {
  const float a = std::fabs(x);
  const float t = numerics::eup_rcp(1.0f + kErfP * a);
  float q = kErfA[4];
  for (int i = 3; i >= 0; --i) q = q * t + kErfA[static_cast<size_t>(i)];
  q = q * t;
  const float y = 1.0f - q * numerics::eup_exp(-(a * a));
  return std::copysign(std::fabs(y), x);
}

}  // namespace

float chip_unary(OpKind op, float x) {
  switch (op) {
    case OpKind::kExp:
      return numerics::eup_exp(x);
    case OpKind::kLog:
      return numerics::eup_log(x);
    case OpKind::kSqrt:
      return numerics::eup_sqrt(x);
    case OpKind::kReciprocal:
      return numerics::eup_rcp(x);
    case OpKind::kSigmoid:
      return numerics::eup_rcp(1.0f + numerics::eup_exp(-x));
    case OpKind::kTanh:
      return numerics::eup_tanh(x);
    case OpKind::kErf:
      return chip_erf(x);
    default:
      TESSERA_CHECK(false, "chip_unary: op " + std::string(op_name(op)) + " is not elementwise");
      return 0.0f;
  }
}

void chip_unary(OpKind op, const float* x, float* y, long n) {
  for (long i = 0; i < n; ++i) y[i] = chip_unary(op, x[i]);
}

}  // namespace tessera::graph::kernels
