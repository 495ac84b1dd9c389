// `tessera bench embedding` (embedding.cpp), its measurement as a function the tests call: the
// forward lookups of T embedding tables on one processor's sparse core against an analytical
// bound.
//
// Workload: T tables of R rows x D fp32 words, laid out one after another in HBM from word 0; per
// table, B bags of exactly L ids, each id drawn from the Zipf distribution of exponent S over
// [0, R) (weight of id k: (k + 1)^-S; S = 0 is uniform): id = the smallest k with
// cdf(k) > u * cdf(R - 1), u = unit53() of one SplitMix64(seed), every id of table 0's bags in
// bag order, then table 1's, ... The sparse core runs one gather (combiner sum, result to HBM)
// per table, in table order, from cycle 0.
//   sim_seconds  the cycle the last gather completes / core.clock_hz;
//   row_bytes    T B L x the bytes of a row's HBM requests (ceil(4 D / q) q, q = the request size);
//   bound_seconds = row_bytes / core.sparse.hbm_bytes_per_cycle / core.clock_hz: the table rows
//                over the HBM bandwidth (one chip: no all-to-all);
//   efficiency   bound_seconds / sim_seconds;
//   lookups      T B L, and lookups / sim_seconds.
// The gathers' values are checked against numerics/embedding_bag.h on the host (sum in id order).
#pragma once

#include <cstdint>

#include "core/spec.h"

namespace tessera::bench {

struct EmbeddingBenchShape {
  int tables = 8;
  int64_t rows = 1'000'000;
  int64_t dim = 64;
  int64_t bag = 32;
  int64_t batch = 512;
  double zipf = 1.05;
  uint64_t seed = 0;
};

struct EmbeddingBenchResult {
  int64_t lookups = 0;
  int64_t sim_cycles = 0;
  double sim_seconds = 0;
  int64_t row_bytes = 0;
  double bound_seconds = 0;
  double efficiency = 0;
  double lookups_per_sim_second = 0;
  // The row stream's interval per request: HBM bandwidth (q / bytes_per_cycle) or the outstanding
  // requests ((latency + that) / outstanding), whichever is longer binds.
  const char* row_stream_limit = "";
  bool values_checked = false;
};

// Throws tessera::Error for sizes < 1, a negative exponent, or tables that do not fit HBM.
EmbeddingBenchResult run_embedding_bench(const core::CoreSpec& spec, const EmbeddingBenchShape& s);

}  // namespace tessera::bench
