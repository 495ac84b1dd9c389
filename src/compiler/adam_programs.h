// Programs around the Adam unit, built without assembly text:
//   * the unit's own programs (isa/adam_isa.h), as instruction words: init (HYPERPARAMETER_IO +
//     ASSIGN), one training step, and the standalone solve loop with the convergence test;
//   * the tensor-core program that starts the unit and waits on its flag;
//   * the baseline: the same Adam step on the tensor core's vector unit (m and v in HBM), whose
//     results are bit-identical to numerics/adam.h: the update of each vector register is
//     emit_adam_update (compiler/kernels.h, the compiled kernel's too), with the step's scalars
//     as host constants (1/sqrt_bc2 = numerics::eup_rcp(sqrt_bc2)). The program streams chunks of
//     8 vregs through a ring of 4 chunk buffers in vector memory: the loads of g, m, v, theta run
//     2 chunks ahead of the compute, so a buffer is reloaded two chunks after its store of m, v,
//     theta was issued (it waits for that store); 4 vregs interleaved, one op per bundle (the code
//     is hand-laid through the Codegen).
#pragma once

#include <cstdint>
#include <vector>

#include "core/adam_unit.h"
#include "core/spec.h"
#include "isa/image.h"

namespace tessera::compiler {

// HBM word addresses of one Adam unit setup.
struct AdamLayout {
  int64_t n = 0;
  int64_t program = 0;  // unit program (2 words per instruction, up to 64 instructions)
  int64_t hyper = 0;    // kAdamHyperWords
  int64_t theta = 0, g = 0;
  int64_t spill = 0;     // 2 n words reserved
  int64_t m = 0, v = 0;  // for the vector-unit baseline only
};
// A layout for n parameters from HBM word `base` on (each region aligned to 1024 words).
AdamLayout adam_layout(int64_t n, int64_t base = 0);

// The unit's programs as instruction words (isa::adam_encode).
std::vector<uint64_t> adam_unit_init_program(const AdamLayout& l);
std::vector<uint64_t> adam_unit_step_program(const AdamLayout& l);
std::vector<uint64_t> adam_unit_solve_program(const AdamLayout& l);
// Instruction words, 2 HBM words each, as a data segment at `addr`.
isa::DataSegment adam_program_segment(const std::vector<uint64_t>& words, int64_t addr);

// Tensor-core program: adam.start on the unit program at HBM word `program`, wait on flag `flag`,
// halt.
isa::Program adam_start_program(int64_t program, int flag = 1);

// Tensor-core program for one Adam step (t >= 1) of n elements on the vector unit (see above).
isa::Program adam_vector_step_program(const core::CoreSpec& spec, const AdamLayout& l,
                                      const core::AdamHyper& h, int64_t t);

}  // namespace tessera::compiler
