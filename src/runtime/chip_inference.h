// Inference of a compiled program on one core: one batch written into HBM, run, and scored.
// ChipTrainer's evaluation runs it on the trainer's core; the data-parallel trainer's evaluation
// (data_parallel.h) runs it on cores of its own, several batches at once.
//
// A batch's score is what ChipTrainer::evaluate adds to a graph::EvalResult: the loss the chip
// computed (the mean over the batch) times the batch size, the argmax hits of every prediction
// (the first maximum wins), the predictions (samples x label values per sample) and the samples.
// Per-layer MXU accumulator widths (pe_attribution.h) apply through the attached attribution.
#pragma once

#include <cstdint>
#include <memory>

#include "compiler/compiler.h"
#include "core/core.h"
#include "graph/host_trainer.h"
#include "runtime/pe_attribution.h"
#include "runtime/replica_state.h"

namespace tessera::runtime {

struct InferenceScore {
  float loss = 0;  // the chip's mean loss over the batch
  int64_t correct = 0, predictions = 0;
  int samples = 0;
};

// Adds `s` to `acc` (in the order of the batches, so the double loss sum is the same every time).
void add_score(const InferenceScore& s, graph::EvalResult& acc);

// Writes n samples' input (n x sample_words 32-bit values: floats or int32 ids) and labels
// (n x label_words) to p's x and labels in the core's HBM; returns the bytes written.
int64_t write_batch(core::Core& core, const compiler::CompiledProgram& p, const void* x,
                    const int32_t* labels, int n, int64_t sample_words, int64_t label_words);

// Runs the inference program p (its code `decoded`) on `core` with `pe` attached for the widths
// (not counted) on the batch written by write_batch, and scores it.
InferenceScore run_inference(core::Core& core, PeAttribution& pe,
                             const compiler::CompiledProgram& p,
                             std::shared_ptr<const core::DecodedProgram> decoded,
                             const int32_t* labels, int n, int64_t label_words);

// A core of its own that evaluates parameters and model state given by the host (no optimizer
// state).
class InferenceCore {
 public:
  // Built running `p` (its code `decoded`), an inference program of the model.
  InferenceCore(const core::CoreSpec& spec, const compiler::CompiledProgram& p,
                std::shared_ptr<const core::DecodedProgram> decoded);

  // The parameters into HBM at `layout`'s addresses (every compiled program of the model shares
  // them).
  void set_params(const compiler::CompiledProgram& layout, const Tensors& params);
  // The model's state (batch normalisation's running averages) at `layout`'s addresses.
  void set_model_state(const compiler::CompiledProgram& layout, const Tensors& state);
  // write_batch then run_inference.
  InferenceScore infer(const compiler::CompiledProgram& p,
                       std::shared_ptr<const core::DecodedProgram> decoded, const void* x,
                       const int32_t* labels, int n, int64_t sample_words, int64_t label_words);

 private:
  core::Core m_core;
  PeAttribution m_pe;
};

}  // namespace tessera::runtime
