// DataParallelRun: the epoch loop of `tessera train --chips N` (runtime/data_parallel.h), its
// per-epoch report, checkpoints and resume.
//
// Per epoch e: the training set in epoch_order(seed, e), in global batches of `batch` (at most
// steps_limit steps when > 0). A last batch with fewer samples than processors is skipped (its
// samples are reported as skipped_samples); any other batch is split as the trainer says (the
// first n % P processors one sample more). Then evaluation (processor 0's weights on one core):
// train accuracy over the first test-set-sized slice of the training set in file order, test
// accuracy and loss over the test set.
//
// Epoch report fields (times are simulated seconds unless named host_):
//   epoch, steps, samples, skipped_samples, loss (mean over the epoch's samples of the step
//   losses), train_accuracy, train_accuracy_samples, test_accuracy, test_loss;
//   sim_chip_seconds      the system's clock over the steps (the latest core per step);
//   sim_host_link_seconds the host writing the shards (chips in parallel);
//   sim_seconds           their sum; samples_per_sim_second = samples / sim_seconds;
//   compute_seconds       per step the busiest processor's time not waiting at a barrier or for an
//                         exchange, summed;
//   exchange_seconds      per step the barriers and exchange phases of the all-reduce's supersteps
//                         on the critical path (system.h GroupTiming), summed;
//   overlap_seconds       max(0, compute + exchange - sim_chip) summed per epoch: time both
//                         happened at once (0 with the plain schedule: the all-reduce starts after
//                         the backward pass and every core waits during each exchange phase; > 0
//                         with overlapped buckets, whose exchange phases run while kernels
//                         compute);
//   exchange_share        exchange_seconds / sim_chip_seconds;
//   exchange_bytes, wire_bytes, packets, retransmissions (fabric, inter-chip and on-chip);
//   link_utilization      mean over inter-chip link directions of busy time / sim_chip_seconds;
//   max_link_utilization  the busiest link direction's;
//   single_core_step_seconds  one core alone training a shard of ceil(batch / P) samples (chip
//                         seconds of a ChipTrainer step on the same core config);
//   scaling_efficiency    (samples / sim_chip_seconds) / (P x ceil(batch / P) /
//                         single_core_step_seconds): throughput over P times one core's at the
//                         same per-processor batch (host link excluded on both sides);
//   host_seconds          wall time of the epoch in this process.
//
// Checkpoints (runtime/checkpoint.h; the same options and file names as TrainingRun, named by the
// global step = DataParallelTrainer::steps()): every checkpoint_every global steps and after every
// epoch. What a resumed run needs to continue bit for bit:
//   params, state   processor 0's parameters and optimizer state; DataParallelTrainer::
//                   replica_state() first checks that every replica's are bit-identical to them
//                   (the run guarantees it), so one replica stands for all P;
//   progress        "epoch", "step" (global batches of the epoch consumed, skipped ones included),
//                   "loss_sum_bits", "samples", "skipped", "epoch_start" (the trainer's totals at
//                   the epoch's start), "single_core_bits" (the scaling baseline), "epochs" (the
//                   finished epochs' reports), and "trainer": DataParallelTrainer::save_state()
//                   (step counter, totals, the system's clocks and every core's, per-group
//                   timing, the fabric's loss streams, wire busy-until times and statistics);
//   identity        "run": "data-parallel", the machine (chips, cores_per_chip, topology, boards,
//                   chips_per_board, processors, rings, directions, fabric_seed), then the single-
//                   chip identity (model, dataset, config and its hash, optimizer, batch, seed,
//                   ...) and adam_on. Resuming with another machine names the first differing key.
// A resumed run's weights, optimizer state and report (every epoch figure but host_seconds, and
// "system") equal an uninterrupted run's bit for bit. The core's memories other than the replica
// state are not saved: every step's program writes what it reads (as in TrainingRun). Under
// mpirun every rank takes part in saving (collective) and rank 0 writes the file; every rank
// reads it on resume.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "runtime/data_parallel.h"
#include "runtime/dataset.h"
#include "runtime/run_config.h"
#include "runtime/training_run.h"

namespace tessera::runtime {

struct DataParallelRunOptions {
  std::string model_name;
  graph::ModelSpec model;
  RunConfig config;
  DataParallelOptions dp;
  int epochs = 1;
  int64_t steps_limit = 0;
  std::string checkpoint_dir;  // empty: no checkpoints
  int64_t checkpoint_every = 0;
  int checkpoint_keep = 2;
  bool resume = false;
};

// The system of a `--chips` run. `file` is the config's system section; chips >= 1; cores_per_chip
// 0 = the file's. A file describing more than one chip fixes the machine: --chips (and a given
// --cores-per-chip other than the file's) must match it. Otherwise --chips N makes one board of N
// chips in a ring (a line for 2 chips) with the file's link, barrier and host settings.
system::SystemSpec data_parallel_system(const system::SystemSpec& file, int chips,
                                        int cores_per_chip);

class DataParallelRun {
 public:
  // With options.resume, loads the newest checkpoint of options.checkpoint_dir (errors: none
  // there, a damaged file, another identity, a single-chip checkpoint).
  DataParallelRun(const Dataset& train, const Dataset& test, DataParallelRunOptions options);
  ~DataParallelRun();

  // Trains until options.epochs are done; false when callbacks.keep_going stopped it first.
  bool run(const TrainingCallbacks& callbacks = {});
  nlohmann::ordered_json identity() const;
  const std::string& resumed_from() const { return m_resumed_from; }
  // model, optimizer, batch, lr, seed, config, config_hash, processors, chips, cores_per_chip,
  // rings, directions, bucket_words, overlap, buckets, overlapped_supersteps_per_step (the
  // all-reduce schedule, DataParallelOptions; the last two of the first shard's image),
  // resumed_from, system (the fabric's stats so far), resolved_config (system.* as run) and
  // "epochs" (the fields above).
  nlohmann::ordered_json report() const;
  const DataParallelTrainer& trainer() const { return *m_trainer; }

 private:
  nlohmann::ordered_json finish_epoch(double wall_seconds);
  void resume();
  void save(
      int epoch);  // the state after the current step; `epoch` is the one in progress afterwards

  const Dataset& m_train;
  const Dataset& m_test;
  DataParallelRunOptions m_options;
  std::unique_ptr<DataParallelTrainer> m_trainer;
  std::string m_resumed_from;
  double m_single_core_s = 0;
  // Position and the epoch in progress.
  int m_epoch = 0;
  int64_t m_step = 0;
  double m_loss_sum = 0;
  int64_t m_samples = 0, m_skipped = 0;
  DataParallelTotals m_epoch_start;
  nlohmann::ordered_json m_epochs = nlohmann::ordered_json::array();
};

}  // namespace tessera::runtime
