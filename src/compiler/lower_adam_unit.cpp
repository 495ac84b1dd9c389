// Adam on the optimizer unit (compiler.h AdamUnitPlan): the step's optimizer section is
//   sli sX, step_program ;; adam.start sX, #flag ;; wait #flag, 1
// and the program carries, as HBM data segments, the unit's step program (DATA_IO of theta and g
// block by block, TRANSFER, MOMENT_UPDATE, PARAM_UPDATE, DATABACK_IO: compiler/adam_programs.h),
// its init program (HYPERPARAMETER_IO, ASSIGN) and the hyperparameter block. The unit computes the
// per-step scalars itself (MOMENT_ESTIMATE: t += 1, step and sqrt(bc2) in fp64, rounded to fp32,
// numerics::adam_step_scalars), so the host's per-step scalars are not read.
#include "compiler/lower_adam_unit.h"

#include "common/error.h"
#include "compiler/adam_programs.h"
#include "core/adam_unit.h"

namespace tessera::compiler {

namespace {

AdamLayout unit_layout(const AdamUnitPlan& u) {
  AdamLayout l;
  l.n = u.n;
  l.theta = u.theta;
  l.g = u.g;
  l.spill = u.spill;
  l.hyper = u.hyper;
  return l;
}

isa::DataSegment program_segment(const std::vector<uint64_t>& words, int64_t at) {
  TESSERA_CHECK(static_cast<int64_t>(2 * words.size()) <= kAdamUnitProgramWords,
                "adam unit program too long");
  return adam_program_segment(words, at);
}

}  // namespace

void emit_adam_unit_start(Codegen& cg, const AdamUnitPlan& u) {
  static_assert(kAdamUnitHyperWords == core::kAdamHyperWords);
  const int r = cg.sreg();
  cg.sli(r, u.step_program);
  cg.op(isa::Opcode::ADAMSTART, 0, r, 0, u.flag);
  cg.em().barrier();
  cg.op(isa::Opcode::WAIT, 0, u.flag, 0, 0, 1);
  cg.em().barrier();
}

std::vector<isa::DataSegment> adam_unit_segments(const AdamUnitPlan& u,
                                                 const graph::OptimizerConfig& o) {
  const AdamLayout l = unit_layout(u);
  core::AdamHyper h;
  h.lr = o.lr;
  h.b1 = o.beta1;
  h.b2 = o.beta2;
  h.eps = o.eps;
  core::validate_adam_hyper(h);
  const auto hw = core::adam_hyper_words(h);
  return {program_segment(adam_unit_step_program(l), u.step_program),
          program_segment(adam_unit_init_program(l), u.init_program),
          isa::DataSegment{isa::Space::Hbm, static_cast<uint64_t>(u.hyper),
                           std::vector<uint32_t>(hw.begin(), hw.end())}};
}

}  // namespace tessera::compiler
