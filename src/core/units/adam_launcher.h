// The Adam unit's launcher: the tensor core's side of the Adam optimizer unit (core/adam_unit.h),
// owned by the DMA unit (units/dma_unit.h), which hands it the adam.start ops of its column.
//   adam.start sA, #C   starts the Adam unit on the program at HBM word sA
// Values: the unit runs its whole program when the op executes (adam_unit.h), reading and writing
// HBM in program order. Time: the op issues once the unit is idle (a second start waits for the
// first run to end; StallCause::DmaQueue); in the timed core flag C is incremented at the run's
// completion cycle (a program must `wait` on it before touching what the unit writes; use a flag
// no DMA in flight shares); the functional interpreter increments it at once.
// Shared HBM (timed core): the unit's DMA path and the core's DMA engine share the HBM data path;
// each cycle of it carries one client's bytes (each at its own rate: core.dma.hbm_bytes_per_cycle,
// core.adam.dma_bytes_per_cycle), first come first served by issue: when adam.start issues, the
// core's DMA data already scheduled (up to DmaEngine::data_free) keeps its cycles and the unit's
// run places its requests around them; the cycles the run then holds are reserved in the DMA
// engine, so core DMAs issued later stream their bytes in the gaps.
// The run charges its DMA through the core's HBM encoder (core/hbm_encoding.h): encoded sizes when
// core.hbm.exponent_encoding.on, counted per kind with the DMA's.
// Config: core.adam.* (adam_unit_spec.h).
#pragma once

#include <cstdint>

#include "core/adam_unit.h"
#include "core/dma.h"
#include "core/hbm_encoding.h"
#include "core/unit.h"

namespace tessera::core {

class AdamLauncher final : public CoreUnit {
 public:
  // `dma` and `encoder`: the core's DMA engine and HBM encoder, which outlive the launcher.
  AdamLauncher(const UnitEnv& env, DmaEngine& dma, HbmEncoder& encoder);

  int64_t ready(const DecodedOp& op, int64_t now, StallCause& cause) const override;
  OpTiming execute(const DecodedOp& op, int64_t now) override;
  bool signals_flags() const override { return true; }
  void retire(int64_t now) override;
  int64_t flag_ready(int flag, int64_t value, int64_t want) const override;

  AdamUnit& adam() { return m_adam; }
  const AdamUnit& adam() const { return m_adam; }

 private:
  DmaEngine& m_dma;
  HbmEncoder& m_encoder;
  AdamUnit m_adam;
};

}  // namespace tessera::core
