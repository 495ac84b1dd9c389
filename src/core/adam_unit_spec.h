// AdamUnitSpec: sizes, widths, latencies and energies of the Adam optimizer unit (one per core),
// read from the "core.adam.*" config keys (declared in adam_unit_spec.cpp, listed by
// `tessera config --schema`).
#pragma once

#include <cstdint>

#include "common/config.h"

namespace tessera::core {

// One vector sub-module of the data-processing module: `width` elements enter per cycle; a result
// leaves `latency` cycles after its element entered.
struct AdamSubModule {
  int width = 128;
  int latency = 4;
};

struct AdamUnitSpec {
  int64_t icache_instrs = 256;         // instruction cache (64-bit instructions)
  int64_t dcache_bytes = 128ll << 20;  // data cache: m and v, 8 bytes per parameter
  int64_t dcache_bytes_per_cycle = 2048;
  int64_t block_elements = 8192;  // elements per processing-module buffer (one DATA_IO)
  int buffers = 8;                // processing-module buffer sets (DATA_IO runs ahead)
  AdamSubModule add{512, 3}, mul{256, 4}, div{128, 12}, sqrt{128, 12};
  int basic_latency = 6;             // basic (scalar, fp64) sub-module, per operation
  int decode_cycles = 1;             // controller: cycles to decode one instruction
  int branch_cycles = 2;             // taken branch: cycles until the next decode
  int dma_latency = 500;             // cycles from a DMA micro-op to its first byte
  double dma_bytes_per_cycle = 428;  // the unit's HBM path
  // energy, pJ
  double add_pj = 0.9, mul_pj = 1.1, div_pj = 4.0, sqrt_pj = 4.0;  // per element
  double basic_op_pj = 5.0;                                        // per scalar operation
  double dcache_byte_pj = 1.25;                                    // per byte read or written
  double buffer_byte_pj = 0.3;  // per byte written into or read out of the module's buffers
  double instr_pj = 5.0;        // decode of one instruction
};

AdamUnitSpec read_adam_unit_spec(ConfigReader& reader);

}  // namespace tessera::core
