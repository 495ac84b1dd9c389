// `tessera train --chips N [--cores-per-chip C] [--config board4.json|pod-torus.json] ...`:
// data-parallel training on the timed multi-processor system (runtime/data_parallel_run.h), with
// the single-chip run's options (model, batch = the global batch, optimizer, lr, seed, steps,
// epochs, host link, --adam-on). The machine: runtime::data_parallel_system (the config's system
// when it has more than one chip, else one board of N chips). Prints the single-chip epoch line
// plus a data-parallel line per epoch; --report writes runtime::DataParallelRun::report().
// --checkpoint-dir / --checkpoint-every / --checkpoint-keep / --resume as for one chip
// (runtime/data_parallel_run.h: the checkpoint holds the system and fabric state too).
// --allreduce auto|ring|torus: the gradient all-reduce (compiler/collectives.h; torus over the
// machine's grid, system/collective_grid.h); default auto (allreduce_for).
// --bucket-words W [--no-overlap]: the bucketed gradient all-reduce (compiler/data_parallel.h).
#pragma once

#include <string>

#include "compiler/collectives.h"
#include "runtime/dataset.h"
#include "runtime/training_run.h"
#include "system/system_spec.h"

namespace tessera::cli {

// The machine of `--chips` (runtime::data_parallel_system on the config file's system section),
// after checking the flags: Error for bad counts, or fewer samples per batch than processors.
system::SystemSpec data_parallel_machine(const std::string& config_path, int chips,
                                         int cores_per_chip, int batch);

// The all-reduce of `--allreduce name` on `machine`: "ring", "torus", or "auto" / "" (the default):
// the torus where the machine's grid has two or more dimensions larger than 1 (cores of a chip x
// chips, or a 2-D torus of chips: fewer supersteps, measured faster on board4.json and
// pod-torus.json), else the ring (a one-dimensional grid, where the two are the same exchange bit
// for bit). Error for other names.
compiler::CollectiveAlgorithm allreduce_for(const std::string& name,
                                            const system::SystemSpec& machine);

// --bucket-words W [--no-overlap] (runtime::DataParallelOptions::bucket_words, overlap).
struct DataParallelFlags {
  int64_t bucket_words = 0;
  bool overlap = true;
};
// Error for --bucket-words / --no-overlap without --chips, a negative bucket, --no-overlap without
// buckets.
void check_data_parallel_flags(bool chips, int64_t bucket_words, bool no_overlap);

void run_train_data_parallel(
    const runtime::Dataset& train, const runtime::Dataset& test,
    const runtime::TrainingRunOptions& single, const system::SystemSpec& machine,
    const std::string& report_path,
    compiler::CollectiveAlgorithm allreduce = compiler::CollectiveAlgorithm::kRing,
    const DataParallelFlags& flags = {});

}  // namespace tessera::cli
