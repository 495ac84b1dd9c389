// TrainingRun: `tessera train` on one simulated chip: the run loop (runtime/run_loop.h) over a
// ChipTrainer (runtime/train_chip.h).
//
// The epoch's machine figures are sums of per-step differences of the core's integer counters
// over the training steps only (evaluation excluded): cycles, MXU and vector busy cycles, event
// counts and MXU work (energy: core/energy.h over those counts, the MXU's by the PE that ran, plus
// the Adam unit's energy from the per-step optimizer costs), encoded HBM traffic per tensor kind
// (runtime/hbm_report.h), host-link bytes (seconds = bytes / host_bytes_per_second). Because they
// are integer sums, an epoch split by an interruption reports exactly the figures of an
// uninterrupted one.
//
// The checkpoint identity is training_identity's alone. The trainer's progress fields:
// "global_step" (ChipTrainer::steps(), Adam's t), "counters" (the epoch's integer counters so
// far), "optimizer_steps" (the epoch's per-step optimizer costs, optimizer_cost.h), "pe" (the
// epoch's MXU work per layer and phase, pe_attribution.h); params are ChipTrainer::params(), state
// its optimizer_state() then model_state() (batch normalisation's running averages).
#pragma once

#include "runtime/run_loop.h"
#include "runtime/train_chip.h"

namespace tessera::runtime {

struct TrainingRunOptions : RunOptions {
  ChipTrainerOptions trainer;
};

class TrainingRun : public RunLoop {
 public:
  // `train` and `test` must outlive the run (RunLoop).
  TrainingRun(const Dataset& train, const Dataset& test, const TrainingRunOptions& options);

  // The ChipTrainer being trained (RunLoop::trainer() is the Trainer wrapping it).
  const ChipTrainer& trainer() const;
};

}  // namespace tessera::runtime
