// Data-parallel training step: a compiled training step with the gradient all-reduce inserted
// between the backward pass and the optimizer update (pass_allreduce.cpp; bucketed:
// pass_bucket_allreduce.cpp). compile() runs them as its passes `allreduce` and `buckets`
// (CompileOptions::allreduce). The image is built in one Codegen: the step's bundles are appended
// where they stand (Emitter::append moves their branch targets with them) and the all-reduce code
// is emitted between them (the collectives through compiler/collective_algorithm.h).
//
// Input: a step compiled with CompileOptions::persistent_grads (or Adam on the unit), so every
// gradient is in one contiguous HBM region whose address does not depend on the batch size, and
// the optimizer section starts after a barrier (CompiledProgram::optimizer_first_bundle).
// Output image, in order:
//   main     bundles [0, optimizer_first_bundle) of the step (forward, loss, backward) unchanged;
//   reduce   for each chunk of the gradient region (at most `chunk_words` words; vector memory from
//            word 0 holds it): DMA HBM -> vmem (flag kAllReduceFlag), multiply every word by this
//            image's weight w = shard / global_batch (fp32, one rounding), the all-reduce (ring or
//            torus) of compiler/collectives.h (sum; index-driven, the same code for every
//            processor), DMA vmem -> HBM. So every processor then holds sum_p w_p g_p: the gradient
//            of the mean loss over the global batch (each g_p is the mean over its shard), reduced
//            in the collective's defined order. Then the model's state (batch normalisation's
//            running averages, CompiledProgram::model_state, one contiguous region; none for most
//            models) the same way: every replica updated its own from its shard's statistics, and
//            now holds sum_p w_p s_p;
//   update   the step's optimizer section (branch targets relocated), ending in halt.
// The main part ends with every gradient in HBM and no DMA in flight, and the update reloads
// everything it uses from HBM, so the reduce code may use any scalar and vector registers and all
// of vector memory (it takes registers from s1..s27, uses v0, v1 and flag kAllReduceFlag; the step
// uses flags 0..2 and the Adam unit's). The image is the same for every processor with the same
// shard size: processor p's copy differs only in its index word (isa::Program::with_index). With
// global batch B over P processors, processor p gets samples [p*q + min(p, r), ...) of the batch, q
// = B / P, r = B % P, the first r one more (compiler::split_range): when P does not divide B the
// processors p < r run the image built from the step compiled for q + 1 samples, the others the one
// for q samples; the reduce and update parts of both are the same code.
//
// Bucketed all-reduce overlapped with the backward pass (AllReduceOptions::bucket_words = W > 0):
//   buckets  the gradients in the order they become final (CompiledProgram::grad_kernel; ties in
//            parameter order) fill buckets of at most W words; a gradient is never split (it is
//            final all at once), so one larger than W is a bucket of its own. Bucket b is ready
//            after the kernel of the last gradient it holds.
//   region   every bucket has its own whole vector registers at the top of vector memory: R rows
//            in all (bucket_step_spec: the gradient in whole vector registers plus one register
//            per parameter for the padding). The step is compiled for a core without them, so no
//            kernel touches the region, and with CompileOptions::kernel_barriers, so the kernel
//            boundaries are clean cuts after which no register but s0 is live.
//   a bucket = start (DMA each piece HBM -> its place in the region, flag kAllReduceFlag, waited;
//            multiply by the weight as above), the 2(n-1) supersteps of the ring all-reduce over
//            its words (collectives.h emit_collective_step: self-contained, every register
//            recomputed from %pid and the superstep number; a superstep's sends of all buckets
//            packed into VLIW bundles by the emitter's list scheduler), finish (DMA region -> HBM,
//            waited).
//   supersteps  the buckets advance in lockstep: a superstep carries the next ring step of every
//            active bucket. Before it, buckets whose supersteps are done finish, and ready buckets
//            start (in order).
//   overlap  (AllReduceOptions::overlap) at each kernel boundary of the step before the last
//            kernel (not after a node without code): `xwait` if a superstep is pending, then a
//            superstep ending in `xsync` (core/exchange.h) if any bucket is active. So at most one
//            superstep is in flight and the next kernel computes while its data travel (the
//            kernels never touch the held words). No branch of the step may cross a boundary that
//            receives code (checked).
//   tail     after the backward pass (where the plain schedule puts its all-reduce): the pending
//            `xwait`, then supersteps ending in `sync` until every bucket is finished (the buckets
//            not started yet start in the first), the model state's all-reduce as in the plain
//            schedule (the buckets' region is free again), then the update.
//   Without overlap every bucket runs in the tail: the same sends in the same buckets, so the same
//   values bit for bit; only time differs. (bucket_words = 0, the plain schedule, cuts the gradient
//   into other fragments: another summation order, last-bit differences.)
// Either algorithm (AllReduceOptions::algorithm): a bucket's supersteps are those of its ring or
// torus all-reduce (emit_collective_step), in the same buckets either way.
// Both shard images of a ragged batch have the same graph nodes and gradient sizes, hence the same
// buckets and the same sequence of syncs, which every processor must execute.
#pragma once

#include <cstdint>

#include "compiler/allreduce_options.h"
#include "compiler/collectives.h"
#include "compiler/compiler.h"
#include "isa/image.h"

namespace tessera::compiler {

inline constexpr int kAllReduceFlag =
    16;  // not used by the compiler's DMAs (0..2) or the Adam unit (8)

// Bundle ranges of the parts in a data-parallel image.
struct DataParallelImage {
  isa::Program program;
  int64_t reduce_first = 0;       // first bundle of the reduce part
  int64_t update_first = 0;       // first bundle of the optimizer update
  int buckets = 0;                // bucketed: the number of buckets
  int overlapped_supersteps = 0;  // bucketed: supersteps issued between backward kernels
};

// The core the step is compiled for when the gradients (`gradient_words` words of `parameters`
// parameters) go in buckets of `bucket_words` words: `spec` without the bucket region (above).
// Error when bucket_words < 1 or the region would take more than half of vector memory.
core::CoreSpec bucket_step_spec(const core::CoreSpec& spec, int64_t gradient_words, int parameters,
                                int64_t bucket_words);

// Builds the image (see above). Errors: the step has no persistent gradient region or no optimizer
// section; shard < 1 or > global_batch; processors < 1.
DataParallelImage data_parallel_step(const CompiledProgram& step, const core::CoreSpec& spec,
                                     const AllReduceOptions& o);
// The bucketed image (bucket_words > 0); data_parallel_step calls it. Further errors: the step was
// not compiled with kernel_barriers, its kernels use rows of the bucket region, a branch crosses a
// kernel boundary that receives code.
DataParallelImage bucketed_data_parallel_step(const CompiledProgram& step,
                                              const core::CoreSpec& spec,
                                              const AllReduceOptions& o);

}  // namespace tessera::compiler
