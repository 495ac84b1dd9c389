// The vector ALU: every op is a loop over the S x L words (lanes of all sublanes) of its
// registers. fp32 arithmetic is IEEE single precision with round to nearest even (the build
// forbids FP contraction and fast-math; subnormals are kept); min/max are
// numerics::fmin_ieee/fmax_ieee. Conversions: fp32 -> int32 rounds to nearest even, saturates to
// [INT32_MIN, INT32_MAX] and maps NaN to 0; int32 -> fp32 rounds to nearest even; fp32 -> bf16 is
// numerics::bf16_from_f32.
// Timing: every op occupies the ALU one cycle and never waits for it; its result is ready at
// start + latency(its class: vector_add, vector_mul). Each op charges S x L vector_elements and
// S x L vreg_elements per register read and written.
#pragma once

#include <cstdint>

#include "core/unit.h"

namespace tessera::core {

class VectorUnit final : public CoreUnit {
 public:
  explicit VectorUnit(const UnitEnv& env) : CoreUnit(env) {}

  int64_t ready(const DecodedOp& op, int64_t now, StallCause& cause) const override { return now; }
  OpTiming execute(const DecodedOp& op, int64_t now) override;
};

}  // namespace tessera::core
