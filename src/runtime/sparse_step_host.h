// The host's side of a compiled step's sparse-core part (compiler/sparse_step.h): the program's
// table registered with the processor's sparse core, an embedding's one-id bags, and the
// sparse core's descriptors run around the tensor core's program.
//
// Per run of a program whose CompiledProgram::sparse is used: write the ids (the program's x) and,
// for an embedding_bag, the offsets; then sparse_forward (before the tensor-core program, which
// waits for its flag) and, in training, sparse_backward once the tensor core has handed off its
// gradients (after the program, or after its main part for a split step: an embedding's dense
// gradient is waited for by the optimizer section).
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "compiler/compiler.h"
#include "core/core.h"

namespace tessera::runtime {

// Registers p's table (CompiledProgram::params[p.sparse.param]) as the sparse core's table 0.
void register_sparse_table(core::Core& c, const compiler::CompiledProgram& p);

// An embedding's bags are one id each: writes offsets 0, 1, .., N at the plan's offsets (a
// program's own words: write them before every run); returns the bytes written.
int64_t write_unit_offsets(core::Core& c, const compiler::CompiledProgram& p);

// The gather, from the tensor core's current cycle (or when the sparse core is free, if later);
// returns the cycle it completes.
int64_t run_sparse_forward(core::Core& c, const compiler::CompiledProgram& p);
// The backward descriptors (compiler::sparse_backward), from when the sparse core is free; returns
// the cycle the last completes.
int64_t run_sparse_backward(core::Core& c, const compiler::CompiledProgram& p);

// The core's sparse-core statistics (SparseCore::report: its counters over every run so far and
// their energy), for a report.
nlohmann::ordered_json sparse_core_json(const core::Core& c);

}  // namespace tessera::runtime
