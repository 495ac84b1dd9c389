#include "core/adam_unit_spec.h"

#include <string>

namespace tessera::core {

namespace {

AdamSubModule read_sub(ConfigReader& r, const char* name, AdamSubModule def) {
  const std::string k = std::string("core.adam.") + name;
  AdamSubModule s;
  s.width = static_cast<int>(
      r.get_int(k + "_width", def.width, {1, 1 << 20}, "elements/cycle",
                std::string("vector ") + name + " sub-module: elements entering per cycle"));
  s.latency =
      static_cast<int>(r.get_int(k + "_latency", def.latency, {1, 100000}, "cycles",
                                 std::string("vector ") + name + " sub-module: pipeline latency"));
  return s;
}

}  // namespace

AdamUnitSpec read_adam_unit_spec(ConfigReader& r) {
  AdamUnitSpec s;
  s.icache_instrs = r.get_int("core.adam.icache_instrs", s.icache_instrs, {4, 1 << 20},
                              "instructions", "Adam unit instruction cache");
  s.dcache_bytes = r.get_int("core.adam.dcache_bytes", s.dcache_bytes, {0, 1ll << 40}, "bytes",
                             "Adam unit data cache (m and v: 8 bytes per parameter)");
  s.dcache_bytes_per_cycle =
      r.get_int("core.adam.dcache_bytes_per_cycle", s.dcache_bytes_per_cycle, {1, 1 << 24},
                "bytes/cycle", "data cache <-> processing module bandwidth");
  s.block_elements =
      r.get_int("core.adam.block_elements", s.block_elements, {1, 1 << 24}, "elements",
                "elements per processing-module buffer (one DATA_IO block)");
  s.buffers = static_cast<int>(
      r.get_int("core.adam.buffers", s.buffers, {1, 64}, "buffers",
                "processing-module buffer sets (DATA_IO of later blocks runs ahead)"));
  s.add = read_sub(r, "add", s.add);
  s.mul = read_sub(r, "mul", s.mul);
  s.div = read_sub(r, "div", s.div);
  s.sqrt = read_sub(r, "sqrt", s.sqrt);
  s.basic_latency =
      static_cast<int>(r.get_int("core.adam.basic_latency", s.basic_latency, {1, 100000}, "cycles",
                                 "basic (scalar fp64) sub-module, per operation"));
  s.decode_cycles =
      static_cast<int>(r.get_int("core.adam.decode_cycles", s.decode_cycles, {1, 1000}, "cycles",
                                 "controller decode per instruction"));
  s.branch_cycles = static_cast<int>(r.get_int("core.adam.branch_cycles", s.branch_cycles,
                                               {1, 1000}, "cycles", "taken branch to next decode"));
  s.dma_latency = static_cast<int>(r.get_int("core.adam.dma_latency", s.dma_latency, {0, 1000000},
                                             "cycles", "Adam unit DMA issue to first byte"));
  s.dma_bytes_per_cycle = r.get_float("core.adam.dma_bytes_per_cycle", s.dma_bytes_per_cycle,
                                      {0.001, 1e6}, "bytes/cycle", "Adam unit HBM bandwidth");
  s.add_pj = r.get_float("core.adam.energy.add_pj", s.add_pj, {0, 1e6}, "pJ",
                         "one element through the vector adder");
  s.mul_pj = r.get_float("core.adam.energy.mul_pj", s.mul_pj, {0, 1e6}, "pJ",
                         "one element through the vector multiplier");
  s.div_pj = r.get_float("core.adam.energy.div_pj", s.div_pj, {0, 1e6}, "pJ",
                         "one element through the vector divider");
  s.sqrt_pj = r.get_float("core.adam.energy.sqrt_pj", s.sqrt_pj, {0, 1e6}, "pJ",
                          "one element through the vector square root");
  s.basic_op_pj = r.get_float("core.adam.energy.basic_op_pj", s.basic_op_pj, {0, 1e6}, "pJ",
                              "one basic (scalar fp64) operation");
  s.dcache_byte_pj = r.get_float("core.adam.energy.dcache_byte_pj", s.dcache_byte_pj, {0, 1e6},
                                 "pJ", "one byte read or written in the data cache");
  s.buffer_byte_pj = r.get_float("core.adam.energy.buffer_byte_pj", s.buffer_byte_pj, {0, 1e6},
                                 "pJ", "one byte into or out of the processing-module buffers");
  s.instr_pj = r.get_float("core.adam.energy.instr_pj", s.instr_pj, {0, 1e6}, "pJ",
                           "decode of one Adam instruction");
  return s;
}

}  // namespace tessera::core
