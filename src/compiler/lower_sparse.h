// Lowering of embedding_bag (graph/ops.def) onto the processor's sparse core (core/sparse_core.h,
// docs/sparse-core.md): the buffers of one bag lookup in HBM, and the descriptors that fill the
// unit's queue for a training step.
//
// Forward: gather(table, bags, combiner) to the tensor core, incrementing its flag `ready_flag`.
// The result goes straight into vector memory when its bytes are at most `vmem_handoff_bytes`
// (and a vector-memory address is given), else to HBM, which the tensor core then reads with DMA.
// Backward: dedup(bags), which needs only the ids and so overlaps the tensor core's backward pass;
// wait on the unit's own flag `grads_flag`, which the tensor core's dma.vh.sc increments once it
// has written the bag gradients `dy` to HBM; scatter_add(dy) into the distinct ids' row gradients;
// update of those rows (SGD, or Adagrad with PyTorch's sparse semantics and accumulators `state`).
// The values equal graph::Executor's embedding_bag / embedding_bag_grad in chip numerics followed
// by numerics/sparse_optimizer.h on the distinct ids in ascending order, but for one difference:
// with combiner none the unit writes only the offsets[B] rows of the ids in use, where the host
// executor also zeroes the rows of the unused id slots; a consumer of the result must read only
// the rows in use.
//
// HBM layout from `base` (words): offsets (bags + 1), ids (capacity), the forward result's HBM
// words (the gather's destination when it goes to HBM; on the vector-memory path the place where
// a tensor-core program that reads its operands from HBM stores it, when the placement asks for
// it), dy, the distinct ids, their count (one word), the inverse map, the row gradients (up to
// min(capacity, rows) rows), then the Adagrad accumulators (rows x dim, zero-initialised by HBM's
// lazy zero pages). The ids and the accumulators may be placed by the caller instead (a compiled
// step's input and optimizer state). With a dense gradient the layout ends after dy and the
// gradient (rows x dim, unless the caller placed it). The table itself is registered separately.
#pragma once

#include <cstdint>
#include <vector>

#include "core/sparse_core.h"

namespace tessera::compiler {

struct SparseBagOptimizer {
  core::SparseOptimizer kind = core::SparseOptimizer::Adagrad;
  double lr = 0.1, lr_decay = 0;
  float eps = 1e-10f;
};

// What one embedding_bag looks up.
struct SparseBagShape {
  int table = 0;              // the sparse core's table index
  int64_t rows = 0, dim = 0;  // the table's shape
  int64_t bags = 0;           // B
  int64_t capacity = 0;       // N: id slots per step (offsets[B] <= N)
  numerics::Combiner combiner = numerics::Combiner::Sum;
};

// Where the lowering puts things.
struct SparseBagPlacement {
  int64_t base = 0;                // first HBM word of the plan's buffers
  int64_t vmem_out = -1;           // vector-memory word for the forward result; -1: none
  int64_t vmem_handoff_bytes = 0;  // the largest result handed over in vector memory
  int ready_flag = 0;              // tensor-core flag of the forward hand-off
  int grads_flag = 0;              // sparse-core flag of the backward hand-off
  // Given by the caller (-1: laid out from base): the ids and the Adagrad accumulators.
  int64_t ids = -1, state = -1;
  // Lay out HBM words for the result on the vector-memory path too (SparseBagPlan::out_hbm).
  bool hbm_copy = false;
  // dense: the backward pass writes the table-shaped gradient (rows x dim) at `dense_grad` (-1:
  // laid out after dy) and increments the tensor core's flag `grad_ready_flag`, for an optimizer
  // on the tensor core; no dedup, no update (nor their buffers). Else the distinct ids' row
  // gradients and the sparse update.
  bool dense = false;
  int64_t dense_grad = -1;
  int grad_ready_flag = -1;
};

struct SparseBagPlan {
  SparseBagShape shape;
  core::SparseBags in;  // offsets and ids
  core::SparseDest to = core::SparseDest::Hbm;
  int64_t out = 0;  // the forward result: HBM or vector-memory word address
  // Its HBM words: out on the HBM path; on the vector-memory path those the placement's hbm_copy
  // laid out, else -1.
  int64_t out_hbm = -1;
  int64_t dy = 0, unique = 0, count = 0, inverse = 0, row_grads = 0, state = 0;
  int ready_flag = 0, grads_flag = 0;
  int64_t dense_grad = -1;  // the dense gradient's word, or -1 (then unique .. state are unused)
  int grad_ready_flag = -1;
  int64_t end = 0;  // first HBM word after the buffers
  // Words of the forward result (and of dy): B x dim, or N x dim for combiner none.
  int64_t out_words() const;
};

// Lays out one bag lookup. Throws tessera::Error for an empty shape.
SparseBagPlan plan_sparse_bag(const SparseBagShape& shape, const SparseBagPlacement& at);

// The forward descriptor (the gather).
std::vector<core::SparseDescriptor> sparse_forward(const SparseBagPlan& p);
// The backward descriptors: dedup, wait, scatter-add, update; with a dense gradient: wait, then the
// dense scatter-add, which increments the tensor core's flag grad_ready_flag (`o` is unused).
std::vector<core::SparseDescriptor> sparse_backward(const SparseBagPlan& p,
                                                    const SparseBagOptimizer& o);

}  // namespace tessera::compiler
