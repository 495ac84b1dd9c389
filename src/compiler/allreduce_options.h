// The options of the gradient all-reduce of data-parallel training (compiler/data_parallel.h): the
// data-parallel image builders take them, and so does compile() (CompileOptions::allreduce) when it
// runs the all-reduce as a pass of its pipeline.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/collectives.h"

namespace tessera::compiler {

struct AllReduceOptions {
  int processors = 1;
  int shard = 1;         // samples this image's processors train on
  int global_batch = 1;  // samples of the whole step
  int rings = 1;         // collective rings per direction (collectives.h)
  int directions = 1;    // 1 or 2
  // The all-reduce algorithm and, for kTorus, its grid (compiler/collectives.h; empty: 1-D).
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  std::vector<int> grid;
  // -1: the one image (index-driven all-reduce, index word 0). p >= 0: processor p's specialised
  // image (the collective with p as a constant, compiler/collectives.h collective_program_for;
  // index word p), the per-processor compilation `tessera bench compile` compares against.
  int processor = -1;
  // > 0: the bucketed all-reduce of at most this many words per bucket (data_parallel.h); the step
  // must be compiled for bucket_step_spec(spec, bucket_words) with kernel_barriers.
  int64_t bucket_words = 0;
  bool overlap = true;  // with bucket_words: supersteps between backward kernels
};

}  // namespace tessera::compiler
