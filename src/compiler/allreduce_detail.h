// Internal to compiler/: the pieces the data-parallel image builders share (pass_allreduce.cpp,
// pass_bucket_allreduce.cpp). The image is built in one Codegen of hand-laid code: the step's
// bundles are appended where they stand (their branch targets move with them) and the all-reduce
// code is emitted between them.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/codegen.h"
#include "compiler/compiler.h"
#include "compiler/data_parallel.h"
#include "isa/image.h"

namespace tessera::compiler {
struct Pipeline;
}

namespace tessera::compiler::detail {

// The allreduce and buckets passes: the step in p.out becomes the data-parallel image
// (data_parallel_step picks the schedule).
void run_allreduce_pass(Pipeline& p);

bool is_branch(isa::Opcode op);

// This image's weight of every reduced word: shard / global batch (fp32, one rounding).
float shard_weight(const AllReduceOptions& o);

// Appends the step's bundles [first, last) to `cg`.
void append_step_code(Codegen& cg, const std::vector<isa::Bundle>& code, int64_t first,
                      int64_t last);

// The image's code from `cg` (img.reduce_first and update_first given as bundles of `cg`'s
// emitter become indices in the code): Error when it does not fit the instruction memory; the
// step's data segments; processor o.processor's index word when specialised.
void finish_image(DataParallelImage& img, Codegen& cg, const CompiledProgram& step,
                  const core::CoreSpec& spec, const AllReduceOptions& o);

// The checks of data_parallel_step common to both schedules (Error, "data-parallel").
void check_step(const CompiledProgram& step, const core::CoreSpec& spec, const AllReduceOptions& o);

// The three operand registers of the DMAs between HBM and the vector memory a collective
// reduces. Taken above the registers a collective holds (CollectiveRegs), so they may stay live
// across one.
struct DmaRegs {
  explicit DmaRegs(HeldRegs& pool);
  ~DmaRegs();
  DmaRegs(const DmaRegs&) = delete;
  DmaRegs& operator=(const DmaRegs&) = delete;
  HeldRegs& pool;
  int r[3];
};

// Multiplies vmem rows [row, row + rows) by the fp32 `weight` (rows a whole number of vector
// registers; a counted loop over them; three registers from the top of `regs`, and the constant
// registers v0, v1).
void emit_scale(Codegen& cg, HeldRegs& regs, int64_t row, int64_t rows, float weight);

// The reduce part for one contiguous HBM region: for each chunk of it (all of vector memory from
// row 0 at most), DMA in, multiply by `weight`, all-reduce (sum), DMA out.
void emit_region_allreduce(Codegen& cg, int64_t region_hbm, int64_t region_words, float weight,
                           const AllReduceOptions& o);

// The model's state (CompiledProgram::model_state: batch normalisation's running averages, one
// contiguous region) reduced the same way, so every replica holds the same state; no code for a
// model without state.
void emit_model_state_allreduce(Codegen& cg, const CompiledProgram& step, float weight,
                                const AllReduceOptions& o);

}  // namespace tessera::compiler::detail
