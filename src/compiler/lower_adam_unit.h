// Lowering of the optimizer update onto the Adam unit (lower_adam_unit.cpp).
#pragma once

#include <vector>

#include "compiler/codegen.h"
#include "compiler/compiler.h"

namespace tessera::compiler {

// The step's optimizer section: start the unit on u.step_program, wait on u.flag.
void emit_adam_unit_start(Codegen& cg, const AdamUnitPlan& u);
// The unit's step and init programs and its hyperparameter block, as HBM data segments.
std::vector<isa::DataSegment> adam_unit_segments(const AdamUnitPlan& u,
                                                 const graph::OptimizerConfig& o);

}  // namespace tessera::compiler
