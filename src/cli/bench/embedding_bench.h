// `tessera bench embedding` (embedding.cpp), its measurement as functions the tests call: the
// forward lookups of T embedding tables on the sparse cores against an analytical bound.
//
// Workload: T tables of R rows x D fp32 words; every processor has, per table, B bags of exactly L
// ids, each id drawn from the Zipf distribution of exponent S over [0, R) (weight of id k:
// (k + 1)^-S; S = 0 is uniform): id = the smallest k with cdf(k) > u * cdf(R - 1), u = unit53()
// of one SplitMix64(seed), every id of processor 0's table 0's bags in bag order, then its table
// 1's, ..., then processor 1's. Every gather combines with sum.
// One chip (run_embedding_bench): one processor. The tables lie one after another in its HBM
// from word 0; the sparse core runs one gather per table (result to HBM), in table order, from
// cycle 0.
//   sim_seconds  the cycle the last gather completes / core.clock_hz;
//   row_bytes    T B L x the bytes of a row's HBM requests (ceil(4 D / q) q, q = the request size);
//   bound_seconds = row_bytes / core.sparse.hbm_bytes_per_cycle / core.clock_hz: the table rows
//                over the HBM bandwidth;
//   efficiency   bound_seconds / sim_seconds;
//   lookups      T B L, and lookups / sim_seconds.
// Several chips (run_sharded_embedding_bench): the P = chips x cores-per-chip processors of a
// system, each with its sparse core, the tables spread over them (system/sparse_shard.h: mod or
// table placement), every processor's bags looked up by system/sparse_shard_lookup.h (ids out,
// rows gathered by their owners, rows back over the packet fabric, combined by the requester).
//   sim_seconds  the last combine's end / core.clock_hz;
//   lookups      P T B L; row_bytes likewise (every lookup reads one row at its owner);
//   bound_seconds = hbm_bound_seconds + exchange_bound_seconds, the BSP phases' bounds:
//     hbm_bound_seconds = (the most row bytes any owner reads + the most row bytes any requester
//       received from other processors and reads back to combine) / HBM bandwidth;
//     exchange_bound_seconds = (the ids' bytes + the rows' bytes that the busiest directed link
//       carries under the fabric's static routing) / link bandwidth + 2 x the longest path's hops
//       x link latency.
// The gathers' values are checked against numerics/embedding_bag.h on the host (sum in id order).
#pragma once

#include <cstdint>

#include "common/thread_pool.h"
#include "core/spec.h"
#include "system/sparse_shard.h"
#include "system/system_spec.h"

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
  // Several chips only.
  int processors = 1;
  double hbm_bound_seconds = 0, exchange_bound_seconds = 0;
  uint64_t id_bytes = 0, exchange_row_bytes = 0;  // payload between processors
  uint64_t busiest_link_bytes = 0;                // ids + rows on the busiest directed link
  int max_hops = 0;
  uint64_t packets = 0;
  // The supersteps' ends, seconds: route, ids delivered, gather, rows delivered, combine.
  double route_seconds = 0, ids_seconds = 0, gather_seconds = 0, rows_seconds = 0,
         combine_seconds = 0;
};

// Throws tessera::Error for sizes < 1, a negative exponent, or tables that do not fit HBM.
EmbeddingBenchResult run_embedding_bench(const core::CoreSpec& spec, const EmbeddingBenchShape& s);
// The same over the processors of `system` (its chips, cores per chip, topology and links);
// `pool`: host threads (results do not depend on them). Throws as above, and for tables or
// buffers that do not fit a processor's HBM.
EmbeddingBenchResult run_sharded_embedding_bench(const core::CoreSpec& spec,
                                                 const system::SystemSpec& system,
                                                 const EmbeddingBenchShape& s,
                                                 system::ShardPlacement placement,
                                                 ThreadPool* pool = nullptr);

}  // namespace tessera::bench
