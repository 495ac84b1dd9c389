// The machine of a data-parallel run (`tessera train --chips N`): its system and the gradient
// all-reduce it uses by default.
#pragma once

#include <string>

#include "compiler/collectives.h"
#include "system/system_spec.h"

namespace tessera::runtime {

// The system of a `--chips` run. `file` is the config's system section; chips >= 1; cores_per_chip
// 0 = the file's. A file describing more than one chip fixes the machine: --chips (and a given
// --cores-per-chip other than the file's) must match it. Otherwise --chips N makes one board of N
// chips in a ring (a line for 2 chips) with the file's link, barrier and host settings. Flag
// values it refuses are UsageErrors (common/error.h).
system::SystemSpec data_parallel_system(const system::SystemSpec& file, int chips,
                                        int cores_per_chip);

// UsageError("train", ...) when a global batch of `batch` samples has fewer than the system's
// processors.
void check_data_parallel_batch(const system::SystemSpec& system, int batch);

// data_parallel_system on the config's system section (RunConfig::system: the file's with the
// run's --set overrides), checked by check_data_parallel_batch.
system::SystemSpec data_parallel_machine(const system::SystemSpec& file, int chips,
                                         int cores_per_chip, int batch);

// The all-reduce of `--allreduce name` on `machine`: "ring", "torus", or "auto" / "" (the default):
// the torus where the machine's grid has two or more dimensions larger than 1 (cores of a chip x
// chips, or a 2-D torus of chips: fewer supersteps, measured faster on board4.json and
// pod-torus.json), else the ring (a one-dimensional grid, where the two are the same exchange bit
// for bit). UsageError for other names.
compiler::CollectiveAlgorithm allreduce_for(const std::string& name,
                                            const system::SystemSpec& machine);

}  // namespace tessera::runtime
