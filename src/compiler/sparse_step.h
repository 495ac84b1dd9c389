// The sparse-core part of a compiled step (compiler/lower_sparse_step.cpp, docs/sparse-core.md):
// a model's embedding_bag over a table parameter runs on the processor's sparse core, the rest on
// the tensor core, handing off through sync flags.
//
// Contract with the host (runtime/bow_chip.h): it registers the table with the sparse core as
// table 0 (CompiledProgram::params[param] at its HBM words, rows x dim) and writes the step's ids
// at plan.in.ids (the program's x) and offsets at plan.in.offsets. Per run: enqueue
// sparse_forward(plan) and run the sparse core from the tensor core's cycle; run the tensor-core
// program; in training, enqueue sparse_backward(plan, optimizer) and run the sparse core again
// (it waits on its own flag for the tensor core's hand-off).
//   forward   the gather writes the bag result straight into vector memory at word 0 when its
//             bytes are at most core.sparse.vmem_handoff_bytes (and vector memory holds it),
//             else to HBM at plan.out_hbm; either way it increments the tensor core's flag
//             kSparseReadyFlag. The tensor core's program starts with `wait kSparseReadyFlag, 1`;
//             on the vector-memory path it then stores the result to plan.out_hbm with one DMA
//             (the compiled kernels read their operands from HBM).
//   backward  the bag gradients dy are written to plan.dy by the kernel that computes them; once
//             every DMA of the program is complete the tensor core issues a one-word dma.vh.sc
//             (vector memory word 0 to `handoff_word`), whose completion increments the sparse
//             core's flag kSparseGradsFlag. The table's gradient (the graph's embedding_bag_grad)
//             is the sparse core's row gradients of the distinct ids; the table is updated there
//             (Adagrad with PyTorch's sparse semantics, accumulators at the parameter's optimizer
//             state), while the tensor core updates the dense parameters (dense Adagrad).
#pragma once

#include <cstdint>

#include "compiler/lower_sparse.h"

namespace tessera::compiler {

inline constexpr int kSparseReadyFlag = 9;  // tensor-core flag (GEMMs use 0..2, the Adam unit 8)
inline constexpr int kSparseGradsFlag = 0;  // the sparse core's own flag
inline constexpr int kSparseGradReadyFlag = 10;  // tensor-core flag: an embedding's dense gradient

struct SparseStep {
  bool used = false;
  int param = -1;  // the table: index into CompiledProgram::params
  SparseBagPlan plan;
  SparseBagOptimizer optimizer;  // training
  int64_t handoff_word = -1;     // HBM word the backward hand-off's DMA writes
};

}  // namespace tessera::compiler
