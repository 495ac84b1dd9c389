// Programs around the Adam unit, generated as text:
//   * the unit's own programs (isa/adam_isa.h): init (HYPERPARAMETER_IO + ASSIGN), one training
//     step, and the standalone solve loop with the convergence test;
//   * the tensor-core program that starts the unit and waits on its flag;
//   * the baseline: the same Adam step on the tensor core's vector unit (m and v in HBM), whose
//     results are bit-identical to numerics/adam.h:
//       sqrt via the EUP's esqrt (numerics::eup_sqrt, correctly rounded); each IEEE division a / b
//       via Markstein's correction, y = RN(1/b) (EUP ercp, correctly rounded), q = RN(a*y),
//       r = fma(-q, b, a) (exact), a/b = RN(q + r*y) (vfma.f32) — the correctly rounded quotient
//       when nothing under- or overflows (for a / sqrt_bc2, y = RN(1/sqrt_bc2) is a host constant).
//     It streams chunks of 8 vregs through a ring of 4 chunk buffers in vector memory: the loads
//     of g, m, v, theta run 2 chunks ahead of the compute, so a buffer is reloaded two chunks
//     after its store of m, v, theta was issued (it waits for that store), 4 vregs interleaved
//     one op per bundle.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/adam_unit.h"
#include "core/spec.h"
#include "isa/image.h"

namespace tessera::core {

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

std::string adam_unit_init_asm(const AdamLayout& l);
std::string adam_unit_step_asm(const AdamLayout& l);
std::string adam_unit_solve_asm(const AdamLayout& l);
// Instruction words, 2 HBM words each, as a data segment at `addr`.
isa::DataSegment adam_program_segment(const std::vector<uint64_t>& words, int64_t addr);

// Tensor-core assembly: adam.start on the unit program at `program`, wait on flag `flag`, halt.
std::string adam_start_asm(int64_t program, int flag = 1);

// Tensor-core assembly for one Adam step (t >= 1) of n elements on the vector unit.
std::string adam_vector_step_asm(const CoreSpec& spec, const AdamLayout& l, const AdamHyper& h,
                                 int64_t t);

}  // namespace tessera::core
