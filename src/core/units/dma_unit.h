// The DMA unit: the core's DMA engine (core/dma.h), its HBM encoder (core/hbm_encoding.h) and the
// launcher of the Adam unit (units/adam_launcher.h), which shares both. It executes the ops of the
// DMA column: the dma ops below, and adam.start, which it hands to the launcher.
//   dma.hv  sD, sA, sB, #C   HBM words [sA, sA+sB) -> vector memory words [sD, sD+sB)
//   dma.vh  sD, sA, sB, #C   vector memory words [sA, sA+sB) -> HBM words [sD, sD+sB)
//   dma.vh.sc sD, sA, sB, #C as dma.vh, but its completion increments the sparse core's own flag C
//                            (core/sparse_core.h: its wait descriptors), not the tensor core's
//   dma.hs / dma.sh          the same with scalar memory
//   dma.hv.2d / dma.vh.2d    sB is the scalar memory address of the descriptor
//                            {count, chunk_words, src_stride, dst_stride} (strides signed, words)
// Addresses and sizes are unsigned 32-bit words. Every chunk's range is checked at issue (the
// bundle faults, the DMA never starts); a request may move at most as many words as its on-chip
// memory holds, and a request to or from vector memory must not touch (over its whole span,
// strides included) words a pending xsync exchange holds. The functional interpreter moves the
// data and increments flag C at once; the timed core queues the request (dma.h: queue, latency,
// shared bandwidth) and does both at completion, and a core's run ends no earlier than its last
// request (drain); dma.vh.sc hands its completion cycle to the sparse core (SparseCore::signal) as
// the cycle of its flag's increment. A DMA op waits for a free queue entry (StallCause::DmaQueue).
// Config: core.dma.*, core.hbm.* (read with the core's memories in read_core_spec).
#pragma once

#include <cstdint>

#include "core/dma.h"
#include "core/hbm_encoding.h"
#include "core/sparse_core.h"
#include "core/unit.h"
#include "core/units/adam_launcher.h"

namespace tessera::core {

class DmaUnit final : public CoreUnit {
 public:
  explicit DmaUnit(const UnitEnv& env);

  int64_t ready(const DecodedOp& op, int64_t now, StallCause& cause) const override;
  OpTiming execute(const DecodedOp& op, int64_t now) override;
  bool signals_flags() const override { return true; }
  void retire(int64_t now) override;
  int64_t flag_ready(int flag, int64_t value, int64_t want) const override;
  int64_t drain() override;

  DmaEngine& engine() { return m_engine; }
  HbmEncoder& hbm_encoder() { return m_encoder; }
  const HbmEncoder& hbm_encoder() const { return m_encoder; }
  AdamUnit& adam() { return m_adam.adam(); }
  const AdamUnit& adam() const { return m_adam.adam(); }

 private:
  // The request of a DMA op, read from the registers (and the descriptor, whose scalar memory read
  // it charges), with its ranges checked.
  DmaRequest request(const DecodedOp& op);

  DmaEngine m_engine;
  HbmEncoder m_encoder;
  AdamLauncher m_adam;  // refers to m_engine and m_encoder
  SparseCore& m_sparse;
};

}  // namespace tessera::core
