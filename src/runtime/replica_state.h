// The training state a compiled step keeps on its core between steps, read and written by the host:
// the parameters (HBM tensors, CompiledProgram::params) and the optimizer state (the HBM tensors
// CompiledProgram::state, or with Adam on the unit its m then v, one tensor per parameter, held in
// the unit's data cache or spill area), and the model's state (batch normalisation's running
// averages, CompiledProgram::model_state). ChipTrainer and the data-parallel trainer's replicas
// (data_parallel.h) both go through these.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "compiler/compiler.h"
#include "core/core.h"

namespace tessera::runtime {

using Tensors = std::vector<std::vector<float>>;

std::vector<float> read_hbm_floats(const core::Core& c, int64_t addr, int64_t n);
// Writes `words` 32-bit words (floats or integers, their bits as they are) from `src` into the
// core's HBM at `addr`.
void write_hbm_words(core::Core& c, int64_t addr, const void* src, int64_t words);
template <class Word>
void write_hbm_words(core::Core& c, int64_t addr, const std::vector<Word>& v) {
  static_assert(sizeof(Word) == 4, "HBM words are 32 bits");
  write_hbm_words(c, addr, v.data(), static_cast<int64_t>(v.size()));
}
Tensors read_params(const core::Core& c, const compiler::CompiledProgram& p);
Tensors read_optimizer_state(const core::Core& c, const compiler::CompiledProgram& p);
// The model's state (CompiledProgram::model_state: batch normalisation's running averages).
Tensors read_model_state(const core::Core& c, const compiler::CompiledProgram& p);

// Error("train", ...) when the tensor count or a size differs from the compiled step's; `what`
// names the values in it ("parameter", "optimizer state").
void write_tensors(core::Core& c, const std::vector<compiler::HbmTensor>& where,
                   const Tensors& values, const char* what);
void write_params(core::Core& c, const compiler::CompiledProgram& p, const Tensors& values);
void write_optimizer_state(core::Core& c, const compiler::CompiledProgram& p,
                           const Tensors& values);
void write_model_state(core::Core& c, const compiler::CompiledProgram& p, const Tensors& values);

// A checkpoint's state tensors (runtime/checkpoint.h Checkpoint::state) are the optimizer state
// followed by the model state: split them for a step laid out like `p` (the last
// p.model_state.size() tensors, or all of them when there are fewer, are the model state; the
// write_* above then name what does not fit).
std::pair<Tensors, Tensors> split_checkpoint_state(const Tensors& state,
                                                   const compiler::CompiledProgram& p);

// A replica's start on a core about to run `p`: the initial parameters into HBM and, when the step
// runs Adam on the unit, HYPERPARAMETER_IO and ASSIGN (m = v = 0, t = 0) through the tensor core.
void start_replica(core::Core& c, const compiler::CompiledProgram& p, const Tensors& params);

}  // namespace tessera::runtime
