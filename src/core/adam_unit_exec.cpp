// adam.start sA, #C: the tensor core starts the Adam unit on the program at HBM word sA.
// Values: the unit runs its whole program when the op executes (adam_unit.h), reading and writing
// HBM in program order. Time: the op issues once the unit is idle (a second start waits for the
// first run to end); in the timed core flag C is incremented at the run's completion cycle (a
// program must `wait` on it before touching what the unit writes; use a flag no DMA in flight
// shares); the functional interpreter increments it at once.
// Shared HBM (timed core): the unit's DMA path and the core's DMA engine share the HBM data path;
// each cycle of it carries one client's bytes (each at its own rate: core.dma.hbm_bytes_per_cycle,
// core.adam.dma_bytes_per_cycle), first come first served by issue: when adam.start issues, the
// core's DMA data already scheduled (up to DmaEngine::data_free) keeps its cycles and the unit's
// run places its requests around them; the cycles the run then holds are reserved in the DMA
// engine, so core DMAs issued later stream their bytes in the gaps.
// The run charges its DMA through the core's HBM encoder (core/hbm_encoding.h): encoded sizes when
// core.hbm.exponent_encoding.on, counted per kind with the DMA's.
#include <cmath>

#include <fmt/format.h>

#include "core/fault.h"
#include "core/machine.h"
#include "core/units/dma_unit.h"

namespace tessera::core {

OpTiming Machine::exec_adam(const DecodedOp& op, int64_t now) {
  DmaUnit& dma_unit = unit_of_type<DmaUnit>();
  DmaEngine& dma = dma_unit.engine();
  const int64_t addr = m_state.sreg(op.a);
  const int64_t start = std::max(now, m_adam.busy_until());
  if (m_timed_dma) m_adam.path().block(start, static_cast<int64_t>(std::ceil(dma.data_free())));
  const int64_t done = m_adam.run(m_state.hbm, addr, start, &dma_unit.hbm_encoder());
  if (m_timed_dma) {
    for (const auto& [from, to] : m_adam.path().log()) dma.reserve(from, to);
    m_adam.add_completion(op.c, done);
  } else {
    m_state.flags[static_cast<size_t>(op.c)] += 1;
  }
  return OpTiming{start, 1, start + m_spec.latency_of(isa::LatencyClass::Dma)};
}

}  // namespace tessera::core
