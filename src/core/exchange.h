// BSP exchange at the level of one core: what xsend buffers and how a receiver applies it.
//
//   sync                      ends the compute phase: the core stops at the barrier of its sync
//                             group; the system (system/system.h) runs the exchange phase and
//                             resumes it. A core outside a system delivers its own sends at once.
//   xsend     sD, sA, sB, sC  buffers vmem words [sA, sA+sB) (snapshot at issue) for processor sC,
//   xsend.add sD, sA, sB, sC  to be stored / added (fp32) / maxed (fp32, NaN wins, +0 > -0) into
//   xsend.max sD, sA, sB, sC  that processor's vmem words [sD, sD+sB) in the exchange phase.
// Checked at issue (a simulated fault of the sending core): sC < the number of processors
// (Machine::exchange_processors), both word ranges inside vector memory. sB = 0 sends nothing.
// Every processor has the same vector memory size, so a checked destination range is valid.
// Timing-only mode (Machine::set_exchange_timing_only, for benchmarks whose values do not matter):
// xsend records only the word count, and nothing is delivered; every time stays the same.
//
// Delivery order (defines the values, independent of timing, packet loss and arrival order):
// after a superstep's exchange, each receiver applies its incoming sends ordered by
// (source processor, the source's program order). Only sends to the same words from different
// sources (or twice from one) depend on this order.
#pragma once

#include <cstdint>
#include <vector>

#include "core/state.h"
#include "isa/opcodes.h"

namespace tessera::core {

enum class XCombine : uint8_t { Store, Add, Max };

struct OutboundSend {
  uint32_t dst_proc = 0;
  uint32_t dst_addr = 0;  // vmem word address at the receiver
  XCombine combine = XCombine::Store;
  uint32_t count = 0;            // words sent
  std::vector<uint32_t> words;   // the payload; empty in timing-only mode (Machine)
};

bool is_exchange_op(isa::Opcode op);  // sync, xsend, xsend.add, xsend.max

// Applies `n` received words at vmem words [addr, addr+n) of `s` (range checked by the sender).
// Empty `words` (timing-only) apply nothing.
void apply_receive(ArchState& s, uint32_t addr, XCombine combine, const uint32_t* words, size_t n);

// A core outside a system: delivers its buffered sends to itself in program order and clears them.
void deliver_to_self(std::vector<OutboundSend>& outbox, ArchState& s);

}  // namespace tessera::core
