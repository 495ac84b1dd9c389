// Optimizer update arithmetic (SGD with momentum, Adam), defined once for the host reference
// executor, the compiler's vector-unit lowering and (later) the Adam unit.
//
// Constants: hyper-parameters are given as double; every constant below is the double
// expression rounded ONCE to fp32 (as frameworks pass Python floats to fp32 kernels):
//   lr_f = f32(lr), mu_f = f32(momentum), b1_f = f32(b1), b2_f = f32(b2), eps_f = f32(eps),
//   omb1_f = f32(1 - b1), omb2_f = f32(1 - b2).
// Adam per-step scalars (t = 1, 2, ...; computed in double, then rounded to fp32 once):
//   bc1 = 1 - b1^t, bc2 = 1 - b2^t, step_f = f32(lr / bc1), sqrt_bc2_f = f32(sqrt(bc2)).
// Per element, in this order, every operation one fp32 rounding (round to nearest even):
//   SGD:  vel = mu_f*vel + g;  theta = theta + (-lr_f)*vel
//   Adam: m = b1_f*m + omb1_f*g
//         v = b2_f*v + (omb2_f*g)*g
//         denom = sqrt(v) / sqrt_bc2_f + eps_f      (sqrt = numerics::eup_sqrt, correctly rounded)
//         theta = theta + (-step_f)*(m / denom)     (IEEE fp32 division)
// (a*b + c*d means: p = a*b, q = c*d, p + q; no fused operations.)
#pragma once

#include <cstdint>

namespace tessera::numerics {

struct SgdConstants {
  float lr, mu;
};
SgdConstants sgd_constants(double lr, double momentum);

struct AdamConstants {
  float b1, b2, eps, omb1, omb2;
};
AdamConstants adam_constants(double b1, double b2, double eps);

struct AdamStepScalars {
  float step, sqrt_bc2;
};
// t >= 1 is the 1-based step count.
AdamStepScalars adam_step_scalars(double lr, double b1, double b2, int64_t t);

void sgd_momentum_update(float* theta, float* vel, const float* g, long n, SgdConstants c);
void adam_update(float* theta, float* m, float* v, const float* g, long n, AdamConstants c,
                 AdamStepScalars s);

}  // namespace tessera::numerics
