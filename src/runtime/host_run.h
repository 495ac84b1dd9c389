// HostRun: `tessera train --executor host-f32`: the run loop (runtime/run_loop.h) over the host
// reference executor (graph::HostTrainer) instead of the simulated chip. The same model, initial
// parameters, batches, optimizer, evaluation, checkpoints and report fields of model quality as a
// chip run of the same flags, computed in fp32 (or in chip numerics) on the host: the reference a
// chip run's losses are compared with.
//
// The checkpoint identity is training_identity's with "run": "host" (a chip run's checkpoint is
// refused, and the other way round). Its progress fields: "optimizer_steps" (Adam's t) and
// "step_loss" (the epoch's per-step losses so far); params are the host's, state the optimizer's
// then the model's (graph::Model::state: batch normalisation's running averages). The epoch
// report: epoch, steps, samples, put_quality's fields, host_seconds and per_step ({"loss": [..]}).
#pragma once

#include <vector>

#include "graph/executor.h"
#include "graph/host_trainer.h"
#include "runtime/run_loop.h"
#include "runtime/train_chip.h"

namespace tessera::runtime {

// The host reference trainer of `model` (graph::HostTrainer) from the parameters a chip run of the
// same model and seed starts from (train_model.h). numerics: kF32 or kChip; use_blas: the
// executor's BLAS GEMMs (graph/executor.h). A model with state needs HostTrainer::keep_state
// with its initial_state and build_eval (HostRunTrainer does so).
graph::HostTrainer host_trainer(const TrainModel& model, int batch, graph::Numerics numerics,
                                const graph::OptimizerConfig& optimizer, uint64_t seed,
                                bool use_blas);

// The host reference behind the Trainer interface.
class HostRunTrainer final : public Trainer {
 public:
  // numerics and use_blas: host_trainer's.
  HostRunTrainer(const TrainModel& model, const ChipTrainerOptions& options,
                 graph::Numerics numerics, bool use_blas);

  const ChipTrainerOptions& options() const override { return m_options; }
  int64_t steps() const override { return m_host.optimizer().steps(); }
  std::optional<double> step(const Batch& b) override;
  void evaluate(const Batch& b, graph::EvalResult& acc) override;
  Tensors parameters() const override { return m_host.params(); }
  void start_epoch() override { m_step_loss.clear(); }
  nlohmann::ordered_json epoch_report(const EpochResult& e) override;
  nlohmann::ordered_json identity(const nlohmann::ordered_json& common) const override;
  void save(Checkpoint& c) const override;
  void restore(const Checkpoint& c, int64_t step, const std::string& path) override;

  Tensors optimizer_state() const { return m_host.optimizer().state(); }

 private:
  ChipTrainerOptions m_options;
  mutable graph::HostTrainer m_host;  // its accessors are not const
  std::vector<double> m_step_loss;    // the epoch's steps so far
};

struct HostRunOptions : RunOptions {
  ChipTrainerOptions trainer;  // batch, optimizer, seed (the host link and Adam's place unused)
  graph::Numerics numerics = graph::Numerics::kF32;
  bool use_blas = true;
};

class HostRun : public RunLoop {
 public:
  // `train` and `test` must outlive the run (RunLoop).
  HostRun(const Dataset& train, const Dataset& test, const HostRunOptions& options);
};

}  // namespace tessera::runtime
