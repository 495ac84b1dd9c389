// Event counters and stall causes shared by the interpreters, the statistics and the energy model.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "isa/opcodes.h"

namespace tessera::core {

// Why a bundle could not issue in the cycle after its predecessor. Each stall cycle is charged to
// exactly one cause (see core.h for the rule).
enum class StallCause : uint8_t {
  None,
  Dependency,  // a source register's producer has not finished (scoreboard)
  Branch,      // taken-branch redirect
  MxuWeights,  // mflip waits for the staged tile to finish shifting in
  MxuBusy,     // MXU weight-shift path or input port busy
  MxuResult,   // mpop waits for a result block in flight
  XuBusy,
  XuResult,
  RpuBusy,
  RpuResult,
  EupBusy,
  EupResult,
  RngBusy,
  FifoFull,  // push waits for a popped slot to drain
  DmaQueue,  // DMA queue full
  SyncWait,  // wait on a sync flag
  Exchange,  // after sync: the BSP barrier and the exchange phase; xwait and implied waits
             // (system/system.h)
};
inline constexpr int kNumStallCauses = 17;
std::string_view to_string(StallCause c);

struct EventCounts {
  int64_t bundles = 0;
  std::array<int64_t, isa::kNumUnits> unit_ops{};
  int64_t scalar_ops = 0;
  int64_t vector_elements = 0;  // element operations in the vector ALUs
  int64_t vreg_elements = 0;    // 32-bit vreg/mask element reads + writes
  int64_t ext_elements = 0;     // elements through XU/RPU/EUP/RNG
  int64_t smem_read_bytes = 0, smem_write_bytes = 0;
  int64_t vmem_read_bytes = 0, vmem_write_bytes = 0;
  int64_t hbm_read_bytes = 0, hbm_write_bytes = 0;
  int64_t dma_requests = 0, dma_bytes = 0;
};

// `after - before`, counter by counter (the events of a section of a run).
inline EventCounts operator-(const EventCounts& a, const EventCounts& b) {
  EventCounts d;
  d.bundles = a.bundles - b.bundles;
  for (size_t i = 0; i < d.unit_ops.size(); ++i) d.unit_ops[i] = a.unit_ops[i] - b.unit_ops[i];
  d.scalar_ops = a.scalar_ops - b.scalar_ops;
  d.vector_elements = a.vector_elements - b.vector_elements;
  d.vreg_elements = a.vreg_elements - b.vreg_elements;
  d.ext_elements = a.ext_elements - b.ext_elements;
  d.smem_read_bytes = a.smem_read_bytes - b.smem_read_bytes;
  d.smem_write_bytes = a.smem_write_bytes - b.smem_write_bytes;
  d.vmem_read_bytes = a.vmem_read_bytes - b.vmem_read_bytes;
  d.vmem_write_bytes = a.vmem_write_bytes - b.vmem_write_bytes;
  d.hbm_read_bytes = a.hbm_read_bytes - b.hbm_read_bytes;
  d.hbm_write_bytes = a.hbm_write_bytes - b.hbm_write_bytes;
  d.dma_requests = a.dma_requests - b.dma_requests;
  d.dma_bytes = a.dma_bytes - b.dma_bytes;
  return d;
}

}  // namespace tessera::core
