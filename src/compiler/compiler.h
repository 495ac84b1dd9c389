// The compiler: a model (graph IR) -> ONE tensor-core program (isa::Program) that runs a whole
// training step (forward, loss, backward, optimizer update) or an inference pass.
//
// Pipeline (one pass per file, the IR verified after each; --dump-after=PASS prints it):
//   autodiff      graph::build_training_graph (training only)          pass_autodiff.cpp
//   plan-hbm      HBM addresses: persistent (inputs, parameters, optimizer state, per-step
//                 scalars) and transient values with live ranges and first-fit reuse
//                 pass_plan_hbm.cpp
//   lower         one kernel per graph node (GEMMs from kernels/gemm, vector kernels from
//                 kernels*.cpp), then the optimizer update per parameter          pass_lower.cpp
//   schedule      the emitter's list scheduling into bundles, DMA descriptors, halt  (codegen.cpp)
//   allreduce     data-parallel (CompileOptions::allreduce): the gradient all-reduce between the
//                 backward pass and the update                                pass_allreduce.cpp
//   buckets       instead of allreduce when bucket_words > 0: the bucketed all-reduce overlapped
//                 with the backward pass                               pass_bucket_allreduce.cpp
//
// The program's contract with the host (runtime/train*): before each run the host writes the
// batch (x: batch x sample fp32, labels: batch int32) and, for Adam, the step's scalars
// {step_f, sqrt_bc2_f} (Adagrad: its step's clr) at the addresses below; parameters, optimizer
// state and the model's state (model_state) live in HBM across runs (written once by the host from
// the initial values); the loss (training) or logits and loss (inference) are read back after the
// run. Inference-only models (graph::Model with labels = loss = -1, compiled with training =
// false): the program computes the logits (the model's output value, any shape) from x alone; the
// CompiledProgram's labels and loss are empty (words 0). Training such a model is an Error.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "compiler/allreduce_options.h"
#include "compiler/mxu_regions.h"
#include "compiler/sparse_step.h"
#include "core/spec.h"
#include "graph/model.h"
#include "graph/optimizer.h"
#include "isa/image.h"

namespace tessera::compiler {

// Where Adam runs: the Adam optimizer unit (core/adam_unit.h; the default) or the vector unit.
enum class AdamOn : uint8_t { kUnit, kVectorUnit };
// Where a model's `embedding` lookup runs (sparse_step.h): the tensor core's DMA gather and
// vector-unit scatter-add (the default), or the sparse core's gather and dense scatter-add.
enum class EmbeddingOn : uint8_t { kTensorCore, kSparseCore };

struct CompileOptions {
  int batch = 128;
  bool training = true;
  graph::OptimizerConfig optimizer;
  AdamOn adam_on = AdamOn::kUnit;
  // Data-parallel training (compiler/data_parallel.h): the gradients become persistent, one
  // contiguous region at the parameters' offsets (CompiledProgram::grads), at the same address for
  // every batch size, so an all-reduce can run over them between the backward pass and the update.
  bool persistent_grads = false;
  // Overlapped all-reduce (compiler/data_parallel.h, AllReduceOptions::bucket_words): a scheduling
  // barrier before every node's kernel after the first gradient's producer, so from there on
  // CompiledProgram::kernel_first marks clean cuts (no bundle holds instructions of two kernels;
  // the kernels hand no register but s0 to later code).
  bool kernel_barriers = false;
  // Data-parallel training: the all-reduce pass (or the buckets pass) makes the program the
  // data-parallel image of compiler/data_parallel.h; implies persistent_grads, and with
  // bucket_words also kernel_barriers and lowering for bucket_step_spec. The other bundle ranges of
  // CompiledProgram then describe the step before the pass.
  std::optional<AllReduceOptions> allreduce;
  EmbeddingOn embedding_on = EmbeddingOn::kTensorCore;
  std::string dump_after;        // pass name, "all" or empty
  std::ostream* dump = nullptr;  // where dumps go
};

struct HbmTensor {
  std::string name;
  int64_t hbm = 0;  // word address
  int64_t words = 0;
};

struct CompileStats {
  int64_t bundles = 0;
  int64_t kernels = 0;
  int64_t gemms = 0;
  int64_t hbm_words = 0;                 // peak HBM footprint
  int64_t transient_words = 0;           // of which live-range planned values
  int64_t transient_unshared_words = 0;  // what they would need without reuse
  int64_t vmem_peak_rows = 0;            // largest vector-memory footprint of a kernel
  int64_t smem_words = 0;
  int64_t mxu_macs = 0;  // multiply-accumulates of the GEMMs (unpadded)
};

// Adam on the unit (pass_plan_hbm.cpp, pass_lower.cpp): the parameters are one contiguous theta
// of n words, their gradients one contiguous g (same offsets); the unit's programs and
// hyperparameter block are data segments of the step program. The step's last bundles start the
// unit on `step_program` and wait on `flag`; the host runs `init_program` (HYPERPARAMETER_IO,
// ASSIGN: m = v = 0, t = 0) once before the first step. The state tensors are the unit's spill
// area (m, v live in its data cache; ChipTrainer reads them from there).
inline constexpr int64_t kAdamUnitProgramWords = 128;  // up to 64 unit instructions
inline constexpr int64_t kAdamUnitHyperWords = 16;     // core::kAdamHyperWords
inline constexpr int kAdamUnitFlag = 8;                // not used by the compiler's DMAs
struct AdamUnitPlan {
  bool used = false;
  int64_t n = 0, theta = 0, g = 0, spill = 0, hyper = 0, step_program = 0, init_program = 0;
  int flag = 0;
};

struct CompiledProgram {
  isa::Program program;
  HbmTensor x, labels, loss, logits, scalars;
  std::vector<HbmTensor> params;  // aligned with graph::Model::params
  // The graph's constants (graph::Graph::constants order), written by the program's data segments.
  std::vector<HbmTensor> constants;
  std::vector<HbmTensor> state;  // SGD: one velocity per parameter; Adam: all m, then all v
  // The model's state (graph::Model::state: batch normalisation's running averages), aligned with
  // it: persistent like the parameters, at addresses that depend on neither the batch nor training
  // vs inference. A training step overwrites each value that has an update with the update (the
  // node computing it writes there); an inference program only reads them.
  std::vector<HbmTensor> model_state;
  // All gradients as one region (gradient of params[i] at grads.hbm + params[i].hbm -
  // params[0].hbm) when CompileOptions::persistent_grads or Adam on the unit; else words = 0.
  HbmTensor grads;
  CompileStats stats;
  // Training: bundles [optimizer_first_bundle, end) are the optimizer update (after a barrier:
  // every gradient is in HBM, no DMA in flight, no branch into or out of it); -1 in inference.
  int64_t optimizer_first_bundle = -1;
  // The MXU kernels' bundle ranges with their layer and phase, in program order (mxu_regions.h).
  std::vector<MxuRegion> mxu_regions;
  // Every graph node's kernel that emitted bundles, in program order: bundles [first_pc, end_pc)
  // and the node's op (graph::op_name), for the per-kernel cycle breakdown of a step
  // (runtime/pe_attribution.h). Without kernel barriers the scheduler may pack a few instructions
  // of neighbouring kernels into one bundle; such a bundle counts for the kernel whose range holds
  // its pc. An MXU node's kernel is also its mxu_regions entry.
  struct KernelRegion {
    int64_t first_pc = 0, end_pc = 0;
    std::string op;
  };
  std::vector<KernelRegion> kernel_regions;
  // Training with CompileOptions::kernel_barriers (else empty): kernel_first[i] = the first bundle
  // of graph node i's kernel (nodes in graph order; kernel_first[nodes] = the end of the last one;
  // a clean cut for i > min(grad_kernel)), and grad_kernel[j] = the node after whose kernel the
  // gradient of params[j] is final in HBM and no later kernel of the step reads it, so the
  // all-reduce may overwrite it: its producer, or its last reader when the backward pass reads it
  // again (batch normalisation's gamma and beta gradients feed its input's); the DMA writing it may
  // still be in flight, DMAs complete in issue order.
  std::vector<int64_t> kernel_first;
  std::vector<int> grad_kernel;
  // The kind of tensor each HBM word holds per bundle range (compiler/hbm_roles.h), for the
  // per-kind accounting of encoded HBM traffic (core/hbm_encoding.h).
  std::vector<core::HbmRole> hbm_roles;
  AdamUnitPlan adam_unit;
  // A model with an embedding_bag, or an embedding on the sparse core: its sparse-core part
  // (sparse_step.h).
  SparseStep sparse;
};

// The names of the passes a compilation with `options` runs, in order (for --dump-after).
std::vector<std::string> pass_names(const CompileOptions& options = {});

CompiledProgram compile(const graph::ModelSpec& model, const core::CoreSpec& spec,
                        const CompileOptions& options);
// A model already built (e.g. graph/gpt_model.h); its batch replaces options.batch.
CompiledProgram compile(graph::Model model, const core::CoreSpec& spec,
                        const CompileOptions& options);

std::string stats_json(const CompileStats& s);

}  // namespace tessera::compiler
