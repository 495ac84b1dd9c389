// The Adam unit's arithmetic, defined once: the reference Adam of numerics/optimizer.h
// (adam_constants, adam_step_scalars, adam_update: the most common framework's single-tensor order)
// split into the unit's two vector stages, plus decoupled weight decay (AdamW) and the
// convergence test. Every operation is one fp32 rounding (round to nearest even), no fusion.
//
//   MOMENT_UPDATE (adam_moments):  m = b1*m + omb1*g;  v = b2*v + (omb2*g)*g
//   PARAM_UPDATE  (adam_params):   [AdamW: theta = theta * decay_f, decay_f = f32(1 - lr*wd)]
//                                  denom = sqrt(v) / sqrt_bc2 + eps
//                                  theta = theta + (-step) * (m / denom)
// adam_moments followed by adam_params (wd = 0) is, element for element, exactly the expression
// sequence of numerics::adam_update (tests/adam check it bit for bit over 1000 steps).
// AdamW follows the framework's AdamW: the decay multiplies theta before the Adam step.
//
// Convergence test (CONVERGENCE_CHECK):
//   temp_i = |theta_t,i - theta_t-1,i| / (|theta_t-1,i| + kConvergenceTiny)     (fp32 ops:
//            d = now - prev; a = |d|; b = |prev| + tiny; temp = a / b)
//   sum    = sum of temp_i in fp64, i ascending (each addition one fp64 rounding); independent of
//            the unit's block size and widths
//   temp2  = f32(sum / n) (fp64 division, rounded once);   converged  <=>  temp2 < f32(ct)
// kConvergenceTiny = 1e-30f keeps temp finite when theta_t-1,i = 0 (temp = |d| * 1e30, which
// overflows to +inf only for |d| > 3.4e8) and is far below any |theta| that matters.
#pragma once

#include <cstdint>

#include "numerics/optimizer.h"

namespace tessera::numerics {

inline constexpr float kConvergenceTiny = 1e-30f;

void adam_moments(float* m, float* v, const float* g, long n, AdamConstants c);
void adam_params(float* theta, const float* m, const float* v, long n, AdamConstants c,
                 AdamStepScalars s);

// f32(1 - lr * wd) computed in double; 1.0f when wd == 0 (adamw_decay then changes nothing).
float adamw_decay_factor(double lr, double weight_decay);
void adamw_decay(float* theta, long n, float decay);

float relative_change(float prev, float now);
// Adds relative_change(prev[i], now[i]) for i ascending to `sum` (fp64) and returns it.
double relative_change_sum(const float* prev, const float* now, long n, double sum);
float convergence_mean(double sum, int64_t n);

// One reference AdamW step on the host (decay, moments, params): the definition the unit and the
// vector-unit program are tested against. wd = 0 is plain Adam (identical to adam_update).
void adamw_reference_step(float* theta, float* m, float* v, const float* g, long n, double lr,
                          double b1, double b2, double eps, double weight_decay, int64_t t);

}  // namespace tessera::numerics
