// Dense Adagrad on the tensor core's vector unit and EUP, bit for bit numerics::adagrad_update
// (numerics/sparse_optimizer.h): s' = s + g g; p' = p + (-clr) (g / (sqrt(s') + eps)), sqrt on the
// EUP (correctly rounded), the division by emit_divide (kernels.h). The step's clr (fp32, from
// numerics::adagrad_step_lr) is one word at `scalars`, written by the host before each step.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/kernels.h"

namespace tessera::compiler {

// The update of one vector register of elements: `neg_clr` and `eps` name the registers of the
// broadcast constants. New values in the order g g, s', sqrt(s'), sqrt(s') + eps, the division's,
// (-clr) ratio, p'.
struct AdagradUpdate {
  int theta, sum;
};
AdagradUpdate emit_adagrad_update(const VectorCode& out, int neg_clr, int eps, int theta, int sum,
                                  int g);

// The update in place of n elements of theta and their accumulators `sum` by the gradient `grad`.
void emit_adagrad(Codegen& cg, const std::string& name, int64_t theta, int64_t sum, int64_t grad,
                  int64_t n, float eps, int64_t scalars);

}  // namespace tessera::compiler
