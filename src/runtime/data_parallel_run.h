// DataParallelRun: `tessera train --chips N`: the run loop (runtime/run_loop.h) over a
// DataParallelTrainer (runtime/data_parallel.h) on the machine of runtime/data_parallel_machine.h.
//
// The model is a layer-list model on image batches or gpt on batches of byte windows (a window is
// a sample: the processors split the windows, each with its labels at every position).
// A batch with fewer samples than processors (only an epoch's last can be) is skipped (its samples
// are reported as skipped_samples); any other batch is split as the trainer says (the first n % P
// processors one sample more). Evaluation (the epoch's, and --eval-every's validation) runs the
// inference program on processor 0's weights in batches of the global batch, on separate cores
// spread over the ranks and host threads (DataParallelTrainer::evaluate).
//
// Epoch report fields (times are simulated seconds unless named host_):
//   epoch, steps, samples, skipped_samples, then run_loop's quality fields (loss, train_accuracy,
//   train_accuracy_samples, test_accuracy, test_loss), processors, supersteps;
//   sim_chip_seconds      the system's clock over the steps (the latest core per step);
//   sim_host_link_seconds the host writing the shards (chips in parallel);
//   sim_seconds           their sum; samples_per_sim_second = samples / sim_seconds;
//   tokens_per_sim_second (gpt) samples x context / sim_seconds;
//   mxu_split             (models with attention: gpt) one processor's step split by layer kind
//                         (pe_attribution.h mxu_split_json): the single-core baseline step below,
//                         its MXU work per kind, and its MXU utilisation split in proportion;
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
//   host_seconds          wall time of the epoch's steps in this process;
//   per_step              one array per figure, an entry per training step of the epoch: loss,
//                         seconds (the system's clock over the step), compute_seconds,
//                         exchange_seconds, overlap_seconds (as the epoch's, for the one step),
//                         barrier_seconds (the barrier part of exchange_seconds), supersteps;
//                         absent when resumed from a checkpoint without them.
// The run report adds, after clock_hz: processors, chips, cores_per_chip, rings, directions,
// allreduce, bucket_words, overlap, buckets, overlapped_supersteps_per_step (the all-reduce
// schedule, DataParallelOptions; the last two of the first shard's image); after resumed_from:
// system (the fabric's stats so far); and resolved_config has system.* as run.
//
// Checkpoints (run_loop.h; named by the global step = DataParallelTrainer::steps()). What a
// resumed run needs to continue bit for bit:
//   params, state   processor 0's parameters and optimizer state; DataParallelTrainer::
//                   replica_state() first checks that every replica's are bit-identical to them
//                   (the run guarantees it), so one replica stands for all P;
//   progress        the loop's fields, then "skipped", "single_core_bits" (the scaling baseline),
//                   "single_core_mxu" (its MXU work per layer, MXU busy cycles and cycles),
//                   "epoch_start" (the trainer's totals at the epoch's start), "per_step" (the
//                   epoch's steps so far: loss and integer picoseconds), and "trainer":
//                   DataParallelTrainer::save_state() (step counter, totals, the system's clocks
//                   and every core's, per-group timing, the fabric's loss streams, wire
//                   busy-until times and statistics);
//   identity        "run": "data-parallel", the machine (chips, cores_per_chip, topology, boards,
//                   chips_per_board, processors, rings, directions, allreduce, fabric_seed, and
//                   with buckets bucket_words and overlap), then training_identity's keys and
//                   adam_on. A checkpoint without "allreduce" was written before the torus
//                   all-reduce existed: it stands for the ring.
// A resumed run's weights, optimizer state and report (every epoch figure but host_seconds, and
// "system") equal an uninterrupted run's bit for bit. The core's memories other than the replica
// state are not saved: every step's program writes what it reads. Under mpirun every rank takes
// part in saving (collective) and rank 0 writes the file; every rank reads it on resume.
#pragma once

#include <functional>
#include <memory>

#include "runtime/data_parallel.h"
#include "runtime/data_parallel_machine.h"
#include "runtime/run_loop.h"
#include "runtime/training_run.h"  // the single-chip run, whose checkpoints this one refuses

namespace tessera::runtime {

struct DataParallelRunOptions : RunOptions {
  DataParallelOptions dp;
};

class DataParallelRun : public RunLoop {
  struct Built;  // a trainer built before the datasets were read (load_and_build)

 public:
  // `train` and `test` must outlive the run (RunLoop).
  DataParallelRun(const Dataset& train, const Dataset& test, const DataParallelRunOptions& options);
  // The run once `load` has filled `train` and `test`: with options.dp.threads >= 2 the trainer is
  // built (its programs compiled, the system's cores built, the replicas started) while `load`
  // runs on another host thread, else after it. Errors are those of load() then the constructor
  // above, in that order, as if one ran after the other.
  static std::unique_ptr<DataParallelRun> load_and_build(const std::function<void()>& load,
                                                         const Dataset& train, const Dataset& test,
                                                         const DataParallelRunOptions& options);

  // The DataParallelTrainer being trained (RunLoop::trainer() is the Trainer wrapping it).
  const DataParallelTrainer& trainer() const;

 private:
  DataParallelRun(const Dataset& train, const Dataset& test, const DataParallelRunOptions& options,
                  Built& built);
};

}  // namespace tessera::runtime
