// RunLoop: the epoch loop of `tessera train` over any Trainer (runtime/trainer.h), with
// checkpoints, resume and the run report.
//
// Per epoch e (0-based): the training set in epoch_order(seed, e), batch by batch through
// Trainer::step (at most steps_limit steps when > 0; a batch the trainer cannot take is consumed
// and counted by it); then Trainer::evaluate_batches over the first test-set-sized slice of the
// training set in file order (train accuracy) and over the test set (test accuracy and loss), and
// the trainer's epoch report.
//
// Checkpoints (runtime/checkpoint.h) go to checkpoint_dir every checkpoint_every global steps
// (Trainer::steps(); 0: never mid-epoch) and after every epoch, named by the global step; the
// newest checkpoint_keep are kept. A checkpoint's identity: training_identity's keys with the
// trainer's (Trainer::identity), among them "run", the kind of run (none for single-chip runs): a
// checkpoint of another kind is refused naming its kind, else a resume names the first key that
// differs. Its progress (JSON): "epoch" (index of the epoch in progress), "step" (batches of it
// consumed), "loss_sum_bits" (the epoch's sum of loss x batch size, IEEE-754 bits), "samples",
// then the trainer's fields (Trainer::save), then "epochs" (the reports of the finished epochs).
// With eval_every > 0 the test set is also evaluated after every eval_every-th global step (not
// the epoch's last, whose evaluation follows anyway): the epoch report's "evals" lists
// {"step", "test_loss", "test_accuracy"} per such evaluation (kept in checkpoints as "evals").
// resume = true loads the newest checkpoint and continues so that the weights, optimizer state
// and every per-epoch figure except host_seconds come out bit-identical to an uninterrupted run.
//
// The run report: model, dataset, optimizer, batch, lr, seed, config, config_hash, clock_hz, the
// trainer's machine description, resumed_from, the trainer's machine statistics,
// resolved_config, and "epochs": one Trainer::epoch_report per finished epoch.
//
// Host time by phase (host_phases_json; host-time fields, different from run to run): wall seconds
// of this process in making the trainer (build_seconds: compiling, building the machine), the
// training steps (train_seconds), every evaluation (eval_seconds) and writing and reading
// checkpoints (checkpoint_seconds).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "graph/model.h"
#include "runtime/dataset.h"
#include "runtime/run_config.h"
#include "runtime/train_model.h"
#include "runtime/trainer.h"

namespace tessera::runtime {

// The loop's options (the trainer's are in the derived options of training_run.h and
// data_parallel_run.h).
struct RunOptions {
  std::string model_name;  // as the user named it (report and checkpoint identity)
  TrainModel model;
  RunConfig config;  // config.resolved is the report's resolved_config
  int epochs = 3;
  int64_t steps_limit = 0;     // steps per epoch; 0 = the whole training set
  std::string checkpoint_dir;  // empty: no checkpoints
  int64_t checkpoint_every = 0;
  int checkpoint_keep = 2;
  bool resume = false;
  int64_t eval_every = 0;  // evaluate the test set every N global steps too; 0 = never
};

struct TrainingCallbacks {
  std::function<void(int epoch, int64_t step, int64_t total, double mean_loss)> progress;
  std::function<void(const nlohmann::ordered_json& epoch_report)> epoch_done;
  // After every step and its checkpoint; returning false stops the run there (an interruption).
  std::function<bool(int64_t global_step)> keep_going;
};

// The identity every checkpoint has: model (and for gpt "gpt": {d_model, heads, layers, context},
// for bert "bert": {d_model, heads, layers, seq, vocab}), dataset and its sample counts, config
// name and hash, optimizer and hyper-parameters, batch, seed, steps_limit, host link bandwidth.
nlohmann::ordered_json training_identity(const Dataset& train, const Dataset& test,
                                         const RunOptions& run, const ChipTrainerOptions& trainer);

class RunLoop {
 public:
  // `train` and `test` must outlive the run. Checks the options, then makes the trainer; with
  // options.resume, loads the newest checkpoint of options.checkpoint_dir (errors: no directory
  // or checkpoint, a damaged file, another identity, another kind of run).
  RunLoop(const Dataset& train, const Dataset& test, RunOptions options,
          const std::function<std::unique_ptr<Trainer>()>& make_trainer);
  virtual ~RunLoop();

  // Trains until options.epochs are done; false when callbacks.keep_going stopped it first.
  bool run(const TrainingCallbacks& callbacks = {});

  nlohmann::ordered_json report() const;
  nlohmann::ordered_json identity() const;
  const std::string& resumed_from() const { return m_resumed_from; }
  const Trainer& trainer() const { return *m_trainer; }
  // {load_seconds (as given: reading the datasets, done before the loop), build_seconds,
  // train_seconds, eval_seconds, checkpoint_seconds} (see above).
  nlohmann::ordered_json host_phases_json(double load_seconds) const;

 protected:
  // A trainer built before the loop (make_trainer handing it over): the seconds it took.
  void add_build_seconds(double seconds) { m_build_seconds += seconds; }

 private:
  void resume();
  // Writes the state after the current step; `epoch` is the epoch in progress afterwards.
  void save(int epoch);
  nlohmann::ordered_json finish_epoch(double wall_seconds);
  // The test set through Trainer::evaluate_batches.
  graph::EvalResult evaluate_test();
  // `data` in file order through Trainer::evaluate_batches, batch by batch until `samples` samples
  // (or all of them) are taken.
  graph::EvalResult evaluate(const Dataset& data, int64_t samples);

  const Dataset& m_train;
  const Dataset& m_test;
  RunOptions m_options;
  std::unique_ptr<Trainer> m_trainer;
  std::string m_resumed_from;
  // Position and the epoch in progress.
  int m_epoch = 0;
  int64_t m_step = 0;
  double m_loss_sum = 0;
  int64_t m_samples = 0;
  nlohmann::ordered_json m_evals = nlohmann::ordered_json::array();  // the epoch's (eval_every)
  nlohmann::ordered_json m_epochs = nlohmann::ordered_json::array();
  // Host wall seconds by phase (host_phases_json).
  double m_build_seconds = 0, m_train_seconds = 0, m_eval_seconds = 0, m_checkpoint_seconds = 0;
};

}  // namespace tessera::runtime
