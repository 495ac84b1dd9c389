// The DLRM's dense part (graph/dlrm_model.h) compiled to a tensor core: one simulated core per
// processor runs the compiled training step's forward and backward (compiler::compile of
// graph::build_dlrm with persistent gradients; the step's main part, runtime/optimizer_cost.h
// split_step) on its share of the batch, in chip numerics, timed.
//
// Per step and processor the host writes the dense parameters, the pooled bags (the graph's bag
// parameters), x and the labels into the core's HBM, runs the main part, and reads the gradients
// of the dense parameters and of the bags from the persistent gradient region. The program's loss
// is the mean over the processor's n samples; the gradients are scaled by n / global on the host
// (so that they add up to the global batch mean's). The compiled optimizer section is not run:
// the dense Adagrad runs on the host after the all-reduce (runtime/dlrm_train.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "compiler/compiler.h"
#include "core/core.h"
#include "core/decoded.h"
#include "core/spec.h"
#include "runtime/dlrm_dense_step.h"
#include "runtime/optimizer_cost.h"

namespace tessera::runtime {

struct DlrmChipDenseRun {
  DlrmDenseGrads grads;  // logits empty (the compiled step keeps only its loss)
  double loss = 0;       // the program's mean BCE over b's samples
  int64_t cycles = 0;    // the core's cycles for the step
};

class DlrmChipDense {
 public:
  // One core of `spec` per processor.
  DlrmChipDense(const graph::DlrmSpec& model, const core::CoreSpec& spec, int processors);
  ~DlrmChipDense();

  // Compiles the step for n samples unless it is compiled (not thread-safe: call before steps
  // run on several threads).
  void prepare(int n);
  // Processor p's step on its share b of a global batch of `global` samples (prepare(b.n) first;
  // processors may run on different threads).
  DlrmChipDenseRun step(int p, const DlrmParams& params, const DlrmBatch& b,
                        const DlrmPooled& pooled, int global);
  // The cores' energy (pJ) over every step they ran: core/energy.h's model of their event counts,
  // MXU work and cycles (static power over the cycles they ran, not while idle).
  double energy_pj() const;

 private:
  struct Program {
    compiler::CompiledProgram compiled;
    StepParts parts;
    std::shared_ptr<const core::DecodedProgram> decoded;  // of parts.main
  };

  graph::DlrmSpec m_model;
  core::CoreSpec m_spec;
  std::map<int, std::unique_ptr<Program>> m_programs;
  std::vector<std::unique_ptr<core::Core>> m_cores;
};

}  // namespace tessera::runtime
