// Internal to compiler/: the pieces the data-parallel image builders share (pass_allreduce.cpp,
// pass_bucket_allreduce.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/compiler.h"
#include "compiler/data_parallel.h"
#include "isa/image.h"

namespace tessera::compiler::detail {

bool is_branch(isa::Opcode op);

// Appends code[first, last) to `out`, moving every branch target by `shift`.
void append_relocated(std::vector<isa::Bundle>& out, const std::vector<isa::Bundle>& code,
                      int64_t first, int64_t last, int64_t shift);

// Ends an image whose code is complete: Error when it does not fit the instruction memory; the
// step's data segments; processor o.processor's index word when specialised.
void finish_image(DataParallelImage& img, const CompiledProgram& step, const core::CoreSpec& spec,
                  const AllReduceOptions& o);

// The checks of data_parallel_step common to both schedules (Error, "data-parallel").
void check_step(const CompiledProgram& step, const core::CoreSpec& spec, const AllReduceOptions& o);

// Multiplies vmem rows [row, row + rows) by the fp32 `weight` (rows a whole number of vector
// registers; uses s22, s23, s27, v0, v1; `label` unique in its text).
std::string scale_asm(int64_t row, int64_t rows, float weight, const core::CoreSpec& spec,
                      const std::string& label);

}  // namespace tessera::compiler::detail
