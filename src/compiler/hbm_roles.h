// HBM roles: which kind of tensor (weights, activations, gradients, optimizer state) each HBM word
// holds while each part of a compiled program runs, for the per-kind accounting of exponent-encoded
// HBM traffic (core/hbm_encoding.h). Metadata, not instructions.
//
// Kinds:
//   weights          the parameters; values computed from parameters only (e.g. transpose(W))
//   activations      the input batch x; values that depend on x but not on the loss seed d.loss
//                    (forward activations, the loss computation)
//   gradients        values that depend on d.loss (the backward pass: input and weight
//                    gradients), and the persistent gradient region
//   optimizer_state  SGD velocities, Adam m and v
// Everything else (labels, loss, optimizer scalars, constants, kernel scratch, the Adam unit's
// programs, the model's state and its updates) has no role: its traffic counts as "other".
// pc ranges: persistent tensors hold their kind over the whole program; a transient value from the
// first bundle of its producer's kernel to the end of its last consumer's kernel (gradients that
// the optimizer reads: to the end of the program). Live values never overlap (pass plan-hbm), so
// at a kernel's pcs a word has at most one role.
#pragma once

#include <vector>

#include "compiler/pipeline.h"
#include "core/hbm_encoding.h"

namespace tessera::compiler {

// kernel_pc[i]: the first bundle of node i's kernel (final program numbering); kernel_pc[n] (n
// nodes): where the code after the last node starts; end_pc: the program's length.
std::vector<core::HbmRole> hbm_roles(const Pipeline& p, const std::vector<int64_t>& kernel_pc,
                                     int64_t end_pc);

}  // namespace tessera::compiler
