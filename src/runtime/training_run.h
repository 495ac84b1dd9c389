// TrainingRun: the epoch loop of `tessera train` (training steps on the simulated chip, evaluation,
// the per-epoch report) with checkpoints and resume.
//
// Per epoch e (0-based): the training set in epoch_order(seed, e), batch by batch through
// ChipTrainer::step (at most steps_limit steps when > 0); then the compiled inference program over
// the first test-set-sized slice of the training set in file order (train accuracy) and over the
// test set (test accuracy and loss). The epoch's machine figures are sums of per-step differences
// of the core's integer counters over the training steps only (evaluation excluded): cycles, MXU
// and vector busy cycles, event counts and MXU work (energy: core/energy.h over those counts, the
// MXU's by the PE that ran, plus the Adam unit's energy from the per-step optimizer costs), encoded
// HBM traffic per tensor kind (runtime/hbm_report.h), host-link bytes (seconds = bytes /
// host_bytes_per_second). Because they are integer sums, an epoch split by an interruption reports
// exactly the figures of an uninterrupted one.
//
// Checkpoints (runtime/checkpoint.h) go to checkpoint_dir every checkpoint_every global steps
// (0: never mid-epoch) and after every epoch, named by the global step; the newest
// checkpoint_keep are kept. A checkpoint's identity: model, dataset and its sample counts, config
// name and hash, optimizer and hyper-parameters, batch, seed, steps_limit, host link bandwidth.
// Its progress (JSON): "epoch" (index of the epoch in progress), "step" (steps done in it),
// "global_step" (ChipTrainer::steps(), Adam's t), "loss_sum_bits" (the epoch's sum of loss x batch
// size, IEEE-754 bits), "samples", "counters" (the epoch's integer counters so far),
// "optimizer_steps" (the epoch's per-step optimizer costs, optimizer_cost.h), "epochs" (the
// reports of the finished epochs). resume = true loads the newest checkpoint and continues so that
// the weights, optimizer state and every per-epoch figure except host_seconds come out
// bit-identical to an uninterrupted run.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/events.h"
#include "core/hbm_encoding.h"
#include "graph/model.h"
#include "runtime/checkpoint.h"
#include "runtime/dataset.h"
#include "runtime/run_config.h"
#include "runtime/train_chip.h"

namespace tessera::runtime {

struct TrainingRunOptions {
  std::string model_name;  // as the user named it (report and checkpoint identity)
  graph::ModelSpec model;
  RunConfig config;
  ChipTrainerOptions trainer;
  int epochs = 3;
  int64_t steps_limit = 0;     // steps per epoch; 0 = the whole training set
  std::string checkpoint_dir;  // empty: no checkpoints
  int64_t checkpoint_every = 0;
  int checkpoint_keep = 2;
  bool resume = false;
};

struct TrainingCallbacks {
  std::function<void(int epoch, int64_t step, int64_t total, double mean_loss)> progress;
  std::function<void(const nlohmann::ordered_json& epoch_report)> epoch_done;
  // After every step and its checkpoint; returning false stops the run there (an interruption).
  std::function<bool(int64_t global_step)> keep_going;
};

// Integer machine counters of training steps (summed per-step differences).
struct StepCounters {
  int64_t cycles = 0, mxu_busy = 0, vector_busy = 0, macs = 0, host_bytes = 0;
  int64_t terms_processed = 0, pe_steps = 0;  // term-serial MXU work (its energy)
  core::EventCounts events;
  core::HbmTrafficByKind hbm{};  // encoded HBM traffic per tensor kind (core/hbm_encoding.h)
};

// A single-chip checkpoint's identity (the keys listed above; data_parallel_run.h extends it).
nlohmann::ordered_json training_identity(const Dataset& train, const Dataset& test,
                                         const TrainingRunOptions& options);

class TrainingRun {
 public:
  // `train` and `test` must outlive the run. With options.resume, loads the newest checkpoint of
  // options.checkpoint_dir (errors: no directory or checkpoint, a damaged file, another identity).
  TrainingRun(const Dataset& train, const Dataset& test, TrainingRunOptions options);
  ~TrainingRun();

  // Trains until options.epochs are done; false when callbacks.keep_going stopped it first.
  bool run(const TrainingCallbacks& callbacks = {});

  // model, optimizer, batch, lr, seed, config name/hash/clock, the resolved config, and "epochs":
  // one object per finished epoch (runtime/training_run.cpp lists the fields).
  nlohmann::ordered_json report() const;
  const ChipTrainer& trainer() const { return *m_trainer; }
  const std::string& resumed_from() const { return m_resumed_from; }
  nlohmann::ordered_json identity() const;

 private:
  void resume();
  // Writes the state after the current step; `epoch` is the epoch in progress afterwards.
  void save(int epoch);
  StepCounters snapshot() const;
  nlohmann::ordered_json finish_epoch(int64_t steps, double wall_seconds);

  const Dataset& m_train;
  const Dataset& m_test;
  TrainingRunOptions m_options;
  std::unique_ptr<ChipTrainer> m_trainer;
  std::string m_resumed_from;
  // Position and the epoch in progress.
  int m_epoch = 0;
  int64_t m_step = 0;
  double m_loss_sum = 0;
  int64_t m_samples = 0;
  StepCounters m_counters;
  std::vector<OptimizerCost> m_opt_steps;  // the epoch's optimizer updates so far, one per step
  PeTally m_pe;  // the epoch's MXU work per layer and phase (pe_attribution.h); in checkpoints
  nlohmann::ordered_json m_epochs = nlohmann::ordered_json::array();
};

}  // namespace tessera::runtime
