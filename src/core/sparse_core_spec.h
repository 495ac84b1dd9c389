// SparseCoreSpec: the request model, widths, throughputs and energies of the sparse core (one per
// processor, core/sparse_core.h), read from the "core.sparse.*" config keys (declared in
// sparse_core_spec.cpp, listed by `tessera config --schema`).
#pragma once

#include <cstdint>

#include "common/config.h"

namespace tessera::core {

struct SparseCoreSpec {
  // HBM access: every read or write is cut into requests of `hbm_request_bytes` (a table row of
  // D fp32 words takes ceil(4 D / hbm_request_bytes) requests); at most `hbm_outstanding` are in
  // flight, each completing `hbm_latency` cycles after issue plus its transfer at
  // `hbm_bytes_per_cycle`.
  // Defaults: configs/tpu-v2-like.json's estimates (its comments give the arithmetic): 4096
  // requests in flight cover the 500-cycle latency at 428 B per cycle (Little's law needs 3,345).
  int64_t hbm_request_bytes = 64;
  int64_t hbm_outstanding = 4096;
  int64_t hbm_latency = 500;
  double hbm_bytes_per_cycle = 428;
  // The on-chip path into the tensor core's vector memory (the small hand-off).
  int64_t vmem_latency = 100;
  double vmem_bytes_per_cycle = 256;
  // A compiled step's lookup result goes through vector memory when its bytes are at most this
  // (and vector memory holds it), else through HBM (compiler/sparse_step.h).
  int64_t vmem_handoff_bytes = 65536;
  // Front end: ids turned into row requests (or hashed for de-duplication) per cycle.
  int64_t ids_per_cycle = 16;
  // SIMD datapath: fp32 element operations per cycle (combiner, scatter-add, optimizer): 128 keeps
  // a sum up with the 107 fp32 words per cycle a row stream delivers at full bandwidth.
  int64_t simd_width = 128;
  // Fetch and decode of one descriptor from the queue.
  int64_t descriptor_cycles = 4;
  int64_t queue = 64;  // descriptors the queue holds
  int flags = 32;      // the sparse core's own sync flags
  // energy, pJ (HBM bytes are priced at core.energy.hbm_byte_pj)
  double id_pj = 2.0;           // one id through the front end
  double element_op_pj = 0.9;   // one fp32 element operation in the SIMD datapath
  double vmem_byte_pj = 1.25;   // one byte handed into the tensor core's vector memory
  double descriptor_pj = 10.0;  // fetch and decode of one descriptor
};

SparseCoreSpec read_sparse_core_spec(ConfigReader& reader);

}  // namespace tessera::core
