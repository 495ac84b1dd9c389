// FifoUnit: the common shape of a pipelined unit whose results go into a ResultFifo (core/fifo.h)
// and are popped into a vreg by a separate op (EUP, reduce/permute, transpose).
//
// Timing (S = sublanes):
//   push: occupies the unit's input for S cycles (one sublane row per cycle), starting at the
//     first cycle >= now at which the input is free and a FIFO slot is free (a slot drains one
//     cycle after its pop); the result is ready at start + S - 1 + latency(the unit's class).
//     Waiting for the input is charged to the unit's busy cause, for a draining slot to
//     StallCause::FifoFull. A push into a FIFO whose slots all hold unpopped results faults.
//   pop: waits for the oldest result; the vreg is written one cycle later. A pop with nothing
//     pushed faults.
// Each push charges S x L ext_elements; each pop S x L vreg_elements.
#pragma once

#include <cstdint>

#include "core/fifo.h"
#include "core/unit.h"

namespace tessera::core {

class FifoUnit : public CoreUnit {
 public:
  struct Params {
    const char* name;  // in fault messages
    int depth;         // FIFO entries (vregs)
    StallCause busy, result;
    isa::LatencyClass latency;
  };
  FifoUnit(const UnitEnv& env, const Params& params);

 protected:
  int64_t push_ready(int64_t now, StallCause& cause) const;
  int64_t pop_ready(int64_t now, StallCause& cause) const;
  // Pushes one vreg of result words (copied) at the first cycle the unit can take it.
  OpTiming push(int64_t now, const uint32_t* words);
  // Pops the oldest result into vreg op.d.
  OpTiming pop(const DecodedOp& op, int64_t now);
  // Charges the vector/mask register operands `op` reads.
  void charge_reads(const DecodedOp& op) {
    m_events.vreg_elements += static_cast<int64_t>(op.vreg_reads) * words();
  }

  ResultFifo m_fifo;
  int64_t m_input_free = 0;  // first cycle the input port takes a new push
  StallCause m_busy, m_result;
  isa::LatencyClass m_latency;
};

}  // namespace tessera::core
