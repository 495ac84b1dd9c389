// CoreSpec: every size, latency, bandwidth, clock and energy figure of one tensor core, parsed and
// validated once from a config file (parse -> validate -> freeze), then passed by const reference.
// No string look-ups on hot paths. The declarations in spec.cpp are also the config schema.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "common/config.h"
#include "core/adam_unit_spec.h"
#include "core/hbm_encoding.h"
#include "core/sparse_core_spec.h"
#include "core/term_mxu_spec.h"
#include "isa/opcodes.h"

namespace tessera::core {

// Energy per event (picojoules; static power in mW): one field per row of energy_parts.def.
struct EnergySpec {
#define X(e, part, field, def, max, unit, what) double field = 0;
#include "core/energy_parts.def"
#undef X
  std::string
      term_source;  // where core.mxu.term.term_pj / step_pj come from (core.mxu.term.energy_source)
};

struct CoreSpec {
  std::string name = "default";
  double clock_hz = 700e6;

  // scalar unit
  int scalar_regs = 32;
  int64_t smem_words = 4096;     // scalar memory, 32-bit words
  int64_t imem_bundles = 65536;  // instruction memory

  // vector unit
  int sublanes = 8;
  int lanes = 128;
  int vector_regs = 32;
  int mask_regs = 8;
  int64_t vmem_bytes = 16ll << 20;  // vector memory
  int64_t vmem_rows() const { return vmem_bytes / (4ll * lanes); }

  // matrix units (each an R x C systolic array, weight stationary, with its own staging tile,
  // accumulators and result FIFO; the ISA addresses them by index)
  int mxu_count = 1;
  int mxu_rows = 128;  // R: reduction dimension (weights rows)
  int mxu_cols = 128;  // C: output columns
  bool mxu_double_buffer = true;
  int mxu_result_fifo =
      33;  // result blocks: ceil((R + C + sublanes) / sublanes) keeps the array streaming
  int mxu_acc_blocks = 256;    // accumulator blocks (sublanes x C fp32 each)
  MxuPe mxu_pe = MxuPe::Bf16;  // processing element: bit-parallel bf16 or term-serial
  TermMxuSpec term;            // the term-serial option (core.mxu.term.*)

  // extended units: FIFO depths (in vregs) and pipeline latencies (cycles)
  int xu_fifo = 16;  // must hold a whole lanes x lanes matrix: lanes / sublanes slices
  int rpu_fifo = 4;
  int eup_fifo = 4;
  int rng_words_per_cycle = 128;  // random 32-bit words the generator makes per cycle

  // latency (cycles from issue until the result may be used) per latency class
  std::array<int, isa::kNumLatencyClasses> latency{};
  int latency_of(isa::LatencyClass c) const { return latency[static_cast<int>(c)]; }

  // HBM and DMA
  int64_t hbm_bytes = 8ll << 30;     // this core's share of the chip's HBM
  double hbm_bytes_per_cycle = 428;  // this core's share of the chip's bandwidth
  int dma_latency = 500;             // cycles from issue to the first byte
  int dma_queue = 16;                // outstanding DMA requests before dma.* stalls
  int sync_flags = 32;
  HbmEncodingSpec hbm_encoding;  // core.hbm.exponent_encoding.* (core/hbm_encoding.h)

  EnergySpec energy;
  AdamUnitSpec adam;      // the Adam optimizer unit (core.adam.*)
  SparseCoreSpec sparse;  // the sparse core (core.sparse.*)
};

// Reads (and validates) a CoreSpec. Keys under "core." in the config document; unknown keys are
// the caller's to reject with reader.finish() once every component has read its part.
CoreSpec read_core_spec(ConfigReader& reader);

// Convenience: read a whole file that holds only a core config; rejects unknown keys.
CoreSpec load_core_spec(const std::string& path);

}  // namespace tessera::core
