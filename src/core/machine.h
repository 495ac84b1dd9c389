// Machine: the architectural state plus the units of one tensor core, and the semantics of every
// op, defined ONCE. Both interpreters (functional.h, core.h) execute bundles through
// Machine::execute; they differ only in when a bundle issues and in how DMA completes.
//
// Units: the registered units (units.h: vector ALU, vector memory, DMA with the Adam unit's
// launcher, MXU, transpose, reduce/permute, EUP, RNG) execute their ops behind the CoreUnit
// interface (unit.h), each owning its state and timing.
//
// The sequencer: the Machine itself executes the ops that decide how the bundle stream goes on,
// and they stay here rather than behind CoreUnit, whose execute returns only timing:
//   * the scalar unit (exec_scalar.cpp): branches, loop and halt end a bundle through Control,
//     and %cycle_lo/hi read the issue cycle (set_cycle);
//   * the sync flags (exec_sync.cpp): wait and signal on the flags that every flag-signalling
//     unit increments; a wait's readiness asks those units (ready());
//   * the exchange (exec_exchange.cpp; sync, xsync, xwait, xsend*): sync ends the compute phase
//     through Control, and the system's BSP drives the rest from outside the core (outbox,
//     receive, set_exchange_done); xsend is counted in the DMA column but executed here.
//
// Time: execute(op, now) runs the op in the bundle issuing at cycle `now`. A unit whose state
// (busy input port, result not yet ready, ...) does not allow the op at `now` performs it at its
// own ready cycle (OpTiming::start): the timed core issues a bundle only when every op is ready
// on the state before the bundle (ready()), so this happens only to ops that contend with an
// earlier slot of the same bundle, which the unit queues in slot order. Values never depend on
// time.
//
// Timing of the Machine's own ops (the registered units' headers give theirs):
//   scalar: one cycle; result ready at start + latency(class).
//   wait: see ready().
//
// The sparse core (sparse_core.h): the processor's one sparse core, beside the tensor core. A host
// fills its descriptor queue and runs it; the flags its descriptors owe the tensor core are
// incremented by set_cycle at their cycles, and a wait short of them is ready at the cycle they
// bring the flag there (after the registered units' own increments).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "common/error.h"
#include "core/adam_unit.h"
#include "core/decoded.h"
#include "core/events.h"
#include "core/exchange.h"
#include "core/fault.h"
#include "core/hbm_encoding.h"
#include "core/mxu.h"
#include "core/sparse_core.h"
#include "core/spec.h"
#include "core/state.h"
#include "core/unit.h"
#include "core/units.h"

namespace tessera::core {

// How a bundle ends: next PC (taken branch) and halt.
struct Control {
  bool taken = false;
  int64_t target = 0;
  bool halt = false;
  bool sync = false;  // the bundle executed `sync` (the core stops at the BSP barrier)
};

class Machine {
 public:
  // timed_dma: DMA completes through the queue (timed core) or instantly (functional).
  // units: the units to build (the core's registry by default; tests may pass their own).
  // Error if two registrations name the same isa::Unit.
  Machine(const CoreSpec& spec, bool timed_dma, UnitTable units = core_units());
  // The units hold references to the state and counters: a Machine stays where it was built.
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  const CoreSpec& spec() const { return m_spec; }
  ArchState& state() { return m_state; }
  const ArchState& state() const { return m_state; }
  // The registered units, in registration order; the one executing `u`'s ops, or nullptr.
  std::span<const std::unique_ptr<CoreUnit>> units() const { return m_units; }
  CoreUnit* unit(isa::Unit u) const { return m_unit_of[static_cast<size_t>(u)]; }
  // The registered unit of type U (TESSERA_CHECK that there is one).
  template <class U>
  U& unit_of_type() const {
    U* found = nullptr;
    for (size_t i = 0; found == nullptr && i < m_units.size(); ++i)
      found = dynamic_cast<U*>(m_units[i].get());
    TESSERA_CHECK(found != nullptr, "the core has the unit looked up by type");
    return *found;
  }
  // The registered MxuUnit's MXUs: mxu() is MXU 0 (the one single-MXU code uses), mxu_stats()
  // the counters of all of them added up. The HBM encoder and the Adam unit of the DmaUnit
  // (unit_of_type).
  int mxu_count() const;
  Mxu& mxu(int index = 0);
  const Mxu& mxu(int index = 0) const;
  MxuStats mxu_stats() const;
  HbmEncoder& hbm_encoder();
  const HbmEncoder& hbm_encoder() const;
  AdamUnit& adam();
  const AdamUnit& adam() const;
  SparseCore& sparse() { return m_sparse; }
  const SparseCore& sparse() const { return m_sparse; }
  EventCounts& events() { return m_ev; }
  const EventCounts& events() const { return m_ev; }

  // Value of the cycle counter special register for the bundle being executed.
  // Also completes the flag-signalling units' work that finished by c (their sync flags, the data
  // of DMA requests).
  void set_cycle(int64_t c) {
    m_cycle = c;
    for (CoreUnit* u : m_flag_units) u->retire(c);
    m_sparse.retire(c, m_state.flags);
  }
  // Sends buffered by xsend since the last sync, in program order (exchange.h).
  std::vector<OutboundSend>& outbox() { return m_outbox; }
  // Number of processors xsend may address (0 .. n-1); 1 for a core outside a system.
  void set_exchange_processors(uint32_t n) { m_exchange_procs = n; }
  uint32_t exchange_processors() const { return m_exchange_procs; }
  void set_exchange_timing_only(bool on) { m_exchange_timing_only = on; }
  // Stores / combines `n` received words at vmem words [addr, addr+n) now, or, while an xsync
  // exchange is pending (exchange.h), holds them for its wait.
  void receive(uint32_t addr, XCombine combine, const uint32_t* words, size_t n);
  // A core outside a system at a sync / xsync: receives its own sends in program order.
  void deliver_to_self();
  // The last xsync's exchange (exchange.h): pending until the wait; its transfers have all arrived
  // at cycle exchange_done() (set by the system; outside one the cycle after the xsync).
  bool exchange_pending() const { return m_exchange_pending; }
  int64_t exchange_done() const { return m_exchange_done; }
  void set_exchange_done(int64_t cycle) { m_exchange_done = cycle; }

  // Copies the bundle's shadow registers (call before its first op).
  void prepare(const DecodedBundle& b);
  // Earliest cycle >= now at which `op` may issue, on the current state; `cause` names what it
  // waits for. Never faults except for a wait that nothing can satisfy.
  int64_t ready(const DecodedOp& op, int64_t now, StallCause& cause) const;
  // Executes `op` (semantics + unit timing). Throws UnitFault on misuse.
  OpTiming execute(const DecodedOp& op, int64_t now, Control& ctl);
  // The timed core's program has halted: completes the units' outstanding work (CoreUnit::drain);
  // returns the cycle the last of it completed, or -1 if there was none.
  int64_t drain();

 private:
  OpTiming exec_scalar(const DecodedOp& op, int64_t now, Control& ctl);
  OpTiming exec_sync(const DecodedOp& op, int64_t now);  // wait, signal
  // The fault of a wait for `op.imm` on flag `op.a` (now `value`) that nothing can satisfy.
  static UnitFault wait_fault(const DecodedOp& op, int64_t value);
  OpTiming exec_exchange(const DecodedOp& op, int64_t now, Control& ctl);  // exec_exchange.cpp
  OpTiming fixed(const DecodedOp& op, int64_t now) const;
  void complete_exchange();  // the wait of a pending xsync exchange: applies the held data
  int64_t flag_ready(int flag, int64_t value, int64_t want) const;

  const CoreSpec& m_spec;
  bool m_timed_dma;
  ArchState m_state;
  SparseCore m_sparse;
  EventCounts m_ev;
  HeldReceives m_held;  // before the units, which refer to it
  std::vector<std::unique_ptr<CoreUnit>> m_units;
  std::array<CoreUnit*, isa::kNumUnits> m_unit_of{};  // by isa::Unit; nullptr: the Machine's own
  // By opcode: m_unit_of of its unit column, nullptr for the exchange's ops (the Machine's).
  std::array<CoreUnit*, isa::kNumOpcodes> m_unit_of_op{};
  std::vector<CoreUnit*> m_flag_units;  // those whose signals_flags()
  int m_words;                          // sublanes * lanes
  int64_t m_cycle = 0;
  std::vector<OutboundSend> m_outbox;
  uint32_t m_exchange_procs = 1;
  bool m_exchange_timing_only = false;
  bool m_exchange_pending = false;
  int64_t m_exchange_done = 0;
};

}  // namespace tessera::core
