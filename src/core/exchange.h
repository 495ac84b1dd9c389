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
// Split-phase exchange (overlapping communication with computation):
//   xsync                     the same barrier and exchange phase as sync, but the core does not
//                             wait for the exchange: it leaves the barrier (system/system.h) and
//                             computes on while its transfers travel. What it receives is held.
//   xwait                     stalls until every transfer the core sent or receives in the last
//                             xsync's exchange has arrived (StallCause::Exchange), then stores /
//                             combines the held data in delivery order. With no xsync exchange
//                             pending, xwait can never finish: a simulated fault.
//   sync, xsync and halt with an xsync exchange pending first wait for it like xwait.
// Values: received data appear in vector memory at the xwait (or implied wait), whatever the
// timing, in both interpreters. A program that neither reads nor writes the destination words of
// its incoming sends between xsync and the wait computes exactly the values of the same program
// with sync in place of xsync (the overlap changes only time). That contract is checked: between
// the exchange's delivery and its wait, a vld/vst (any form), a DMA to or from vector memory (its
// whole span) or an xsend whose words overlap held received words is a simulated fault (not in
// timing-only mode, which holds no words). The sender's words were copied at xsend, so it may
// overwrite them at once.
// Time model: the exchange block reads and writes vector memory through its own port; its
// accesses never delay the core's (assumed free; the words it moves are counted at xsend).
// Outside a system xsync delivers the core's own sends at the xwait, which then does not stall.
//
// Delivery order (defines the values, independent of timing, packet loss and arrival order):
// after a superstep's exchange, each receiver applies its incoming sends ordered by
// (source processor, the source's program order). Only sends to the same words from different
// sources (or twice from one) depend on this order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/state.h"
#include "isa/opcodes.h"

namespace tessera::core {

enum class XCombine : uint8_t { Store, Add, Max };

struct OutboundSend {
  uint32_t dst_proc = 0;
  uint32_t dst_addr = 0;  // vmem word address at the receiver
  XCombine combine = XCombine::Store;
  uint32_t count = 0;           // words sent
  std::vector<uint32_t> words;  // the payload; empty in timing-only mode (Machine)
};

bool is_exchange_op(isa::Opcode op);  // sync, xsync, xwait, xsend, xsend.add, xsend.max

// Received words an xsync exchange holds until the wait (Machine::receive).
struct HeldReceive {
  uint32_t addr = 0;
  XCombine combine = XCombine::Store;
  std::vector<uint32_t> words;
};

// The receives a pending xsync exchange holds, in delivery order. The Machine fills and applies
// them; every unit that reads or writes vector memory checks its words against them (the
// split-phase contract above).
class HeldReceives {
 public:
  bool empty() const { return m_held.empty(); }
  void hold(uint32_t addr, XCombine combine, const uint32_t* words, size_t n);
  // UnitFault if vmem words [first, first+count) overlap held words; `what` names the access.
  void check(int64_t first, int64_t count, std::string_view what) const;
  // Stores / combines every held receive into `s` in order and forgets them.
  void apply(ArchState& s);

 private:
  std::vector<HeldReceive> m_held;
};

// Applies `n` received words at vmem words [addr, addr+n) of `s` (range checked by the sender).
// Empty `words` (timing-only) apply nothing.
void apply_receive(ArchState& s, uint32_t addr, XCombine combine, const uint32_t* words, size_t n);

}  // namespace tessera::core
