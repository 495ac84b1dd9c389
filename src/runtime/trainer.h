// Trainer: one model training on one machine, as the run loop drives it (runtime/run_loop.h).
// The loop owns the data order, the epochs, checkpoints, resume and the run report; a trainer owns
// the machine: its training steps and evaluation, the training state a checkpoint keeps, and the
// machine figures of the epoch and run reports. The single-chip trainer (runtime/training_run.h)
// and the data-parallel one (runtime/data_parallel_run.h) implement it; another workload or
// machine is one more implementation of this interface under the same loop.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "graph/host_trainer.h"
#include "runtime/checkpoint.h"
#include "runtime/dataset.h"
#include "runtime/replica_state.h"
#include "runtime/train_chip.h"

namespace tessera::runtime {

// What the loop measured in one epoch, for the trainer's epoch report.
struct EpochResult {
  int epoch = 0;        // 0-based
  int64_t steps = 0;    // batches of the epoch consumed (skipped ones included)
  int64_t samples = 0;  // samples trained on
  double loss_sum = 0;  // sum over the steps of the step's loss x its batch size
  // Evaluation after the epoch's steps: over the first test-set-sized slice of the training set
  // in file order, and over the test set.
  graph::EvalResult train, test;
  double wall_seconds = 0;  // host wall time of the epoch's steps in this process
};

// The epoch report's model-quality fields, in this order: loss (loss_sum / samples),
// train_accuracy, train_accuracy_samples, test_accuracy, test_loss.
void put_quality(nlohmann::ordered_json& j, const EpochResult& e);
// An epoch report's first fields: epoch (1-based), steps, samples, then put_quality's.
void put_epoch(nlohmann::ordered_json& j, const EpochResult& e);

double ratio(double a, double b);  // a / b, 0 when b <= 0

// t.step on the batch's input (its images, or its windows' byte ids) and labels.
template <class T>
auto step_on(T& t, const Batch& b) {
  return b.ids.empty() ? t.step(b.images.data(), b.labels.data(), b.size)
                       : t.step(b.ids.data(), b.labels.data(), b.size);
}

// t.evaluate on the batch, adding to `acc`.
template <class T>
void evaluate_on(T& t, const Batch& b, graph::EvalResult& acc) {
  if (b.ids.empty())
    t.evaluate(b.images.data(), b.labels.data(), b.size, acc);
  else
    t.evaluate(b.ids.data(), b.labels.data(), b.size, acc);
}

// The field `key` of a checkpoint's progress as T (Error naming `path`: missing, wrong type).
template <class T>
T progress_field(const nlohmann::ordered_json& progress, const char* key, const std::string& path) {
  if (!progress.contains(key))
    throw Error(path, fmt::format("corrupt checkpoint progress (no '{}')", key));
  try {
    return progress[key].get<T>();
  } catch (const nlohmann::json::exception&) {
    throw Error(path, fmt::format("corrupt checkpoint progress ('{}' has the wrong type)", key));
  }
}

class Trainer {
 public:
  virtual ~Trainer() = default;

  // Batch (global), optimizer, seed and host link of the run.
  virtual const ChipTrainerOptions& options() const = 0;
  // Training steps done: Adam's t, and the step a checkpoint is named by.
  virtual int64_t steps() const = 0;

  // One training step on `b`: the loss (mean over its samples) before the update; nothing when
  // the trainer cannot take the batch (the data-parallel one: fewer samples than processors),
  // which it then counts in its epoch figures.
  virtual std::optional<double> step(const Batch& b) = 0;
  // Inference on `b`: adds loss x size and argmax hits to `acc`.
  virtual void evaluate(const Batch& b, graph::EvalResult& acc) = 0;
  // Inference on every batch: adds to `acc` what evaluate would, batch after batch. A trainer may
  // run the batches at once (the data-parallel one: over its host threads and ranks, collective).
  virtual void evaluate_batches(std::span<const Batch> batches, graph::EvalResult& acc) {
    for (const Batch& b : batches) evaluate(b, acc);
  }
  // The parameters as trained (aligned with graph::Model::params).
  virtual Tensors parameters() const = 0;

  // The epoch's machine figures start here. A new trainer is at the start of an epoch; the loop
  // calls this after every epoch, before that epoch's checkpoint.
  virtual void start_epoch() = 0;
  // One epoch's report: "epoch" (1-based), "steps", "samples", put_quality's fields, the
  // machine's figures and "host_seconds".
  virtual nlohmann::ordered_json epoch_report(const EpochResult& e) = 0;

  // The checkpoint identity: `common` (training_identity) with the machine's keys.
  virtual nlohmann::ordered_json identity(const nlohmann::ordered_json& common) const = 0;
  // Identity keys that checkpoints of older versions lack, with the value they stood for.
  virtual nlohmann::ordered_json identity_defaults() const {
    return nlohmann::ordered_json::object();
  }
  // Into `c`: the parameters, the optimizer state and the trainer's progress fields (after the
  // loop's position fields). May be collective (every rank of a distributed run calls it).
  virtual void save(Checkpoint& c) const = 0;
  // From a checkpoint of this identity whose position the loop has read (`step`: batches of the
  // epoch consumed); errors name `path`.
  virtual void restore(const Checkpoint& c, int64_t step, const std::string& path) = 0;
  // Whether this process writes the checkpoint files and the run's output (rank 0 of a
  // distributed run).
  virtual bool writes_files() const { return true; }

  // The run report's machine description (after "clock_hz") and machine statistics (after
  // "resumed_from").
  virtual void report_machine(nlohmann::ordered_json& /*report*/) const {}
  virtual void report_statistics(nlohmann::ordered_json& /*report*/) const {}
};

}  // namespace tessera::runtime
