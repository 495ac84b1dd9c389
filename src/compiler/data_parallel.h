// Data-parallel training step (issue 4 section 4): a compiled training step with the gradient
// all-reduce inserted between the backward pass and the optimizer update (pass_allreduce.cpp).
//
// Input: a step compiled with CompileOptions::persistent_grads (or Adam on the unit), so every
// gradient is in one contiguous HBM region whose address does not depend on the batch size, and
// the optimizer section starts after a barrier (CompiledProgram::optimizer_first_bundle).
// Output image, in order:
//   main     bundles [0, optimizer_first_bundle) of the step (forward, loss, backward) unchanged;
//   reduce   for each chunk of the gradient region (at most `chunk_words` words; vector memory from
//            word 0 holds it): DMA HBM -> vmem (flag kAllReduceFlag), multiply every word by this
//            image's weight w = shard / global_batch (fp32, one rounding), the all-reduce (ring or torus) of
//            compiler/collectives.h (sum; index-driven, the same code for every processor), DMA
//            vmem -> HBM. So every processor then holds sum_p w_p g_p: the gradient of the mean
//            loss over the global batch (each g_p is the mean over its shard), reduced in the
//            collective's defined order;
//   update   the step's optimizer section (branch targets relocated), ending in halt.
// The main part ends with every gradient in HBM and no DMA in flight, and the update reloads
// everything it uses from HBM, so the reduce code may use any scalar and vector registers and all
// of vector memory (it uses s1..s28, v0, v1 and flag kAllReduceFlag; the step uses flags 0..2 and
// the Adam unit's).
// The image is the same for every processor with the same shard size: processor p's copy differs
// only in its index word (isa::Program::with_index). With global batch B over P processors,
// processor p gets samples [p*q + min(p, r), ...) of the batch, q = B / P, r = B % P, the first r
// one more (compiler::split_range): when P does not divide B the processors p < r run the image
// built from the step compiled for q + 1 samples, the others the one for q samples; the reduce and
// update parts of both are the same code.
#pragma once

#include <cstdint>

#include "compiler/collectives.h"
#include "compiler/compiler.h"
#include "isa/image.h"

namespace tessera::compiler {

inline constexpr int kAllReduceFlag = 16;  // not used by the compiler's DMAs (0..2) or the Adam unit (8)

struct AllReduceOptions {
  int processors = 1;
  int shard = 1;         // samples this image's processors train on
  int global_batch = 1;  // samples of the whole step
  int rings = 1;         // collective rings per direction (collectives.h)
  int directions = 1;    // 1 or 2
  // The all-reduce algorithm and, for kTorus, its grid (compiler/collectives.h; empty: 1-D).
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  std::vector<int> grid;
  // -1: the one image (index-driven all-reduce, index word 0). p >= 0: processor p's specialised
  // image (the collective with p as a constant, compiler/collectives.h collective_asm_for; index
  // word p), the per-processor compilation `tessera bench compile` compares against.
  int processor = -1;
};

// Bundle ranges of the parts in a data-parallel image.
struct DataParallelImage {
  isa::Program program;
  int64_t reduce_first = 0;  // first bundle of the reduce part
  int64_t update_first = 0;  // first bundle of the optimizer update
};

// Builds the image (see above). Errors: the step has no persistent gradient region or no optimizer
// section; shard < 1 or > global_batch; processors < 1.
DataParallelImage data_parallel_step(const CompiledProgram& step, const core::CoreSpec& spec, const AllReduceOptions& o);

// Assembly text of the reduce part alone (ending without halt; labels prefixed "ar"), for
// `grad_hbm`/`grad_words`; the weight is the fp32 value `weight`.
std::string gradient_allreduce_asm(int64_t grad_hbm, int64_t grad_words, float weight, const core::CoreSpec& spec,
                                   const AllReduceOptions& o);

}  // namespace tessera::compiler
