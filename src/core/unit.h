// CoreUnit: the interface of a pluggable unit of the tensor core (MXU, transpose, reduce/permute,
// EUP, RNG, vector ALU, vector memory, DMA, ...), and UnitRegistration, the one line that puts a
// unit into the core (units.h).
//
// A unit executes the ops whose unit column in isa/opcodes.def is its isa::Unit, except the
// exchange's (core/exchange.h), which the Machine executes whatever their column. Machine (the
// core's semantics, machine.h) owns one instance of every registered unit and, for such an op:
//   * ready(op, now, cause): asks when the op may issue on the state before its bundle (the timed
//     core issues a bundle at the latest ready cycle of its ops, and charges the stall to the
//     cause of the latest one). Never faults; a misuse that no waiting can cure is execute's to
//     report.
//   * execute(op, now): performs the op in the bundle issuing at `now`: reads and writes the
//     architectural state (values never depend on time), advances the unit's own timing (input
//     port busy until, result FIFO, ...) and returns OpTiming: the cycle the unit performed the op
//     (>= now; later than `now` only for an op queued behind an earlier slot of the same bundle),
//     the cycles it occupied the unit (the core's busy-cycle and utilisation statistics) and the
//     cycle its destination register may be read. Misuse throws UnitFault (core/fault.h).
//     Energy: the op charges its work to the core's event counters (event_counters.def), which
//     the energy model prices (energy.h); the op count per unit is charged by Machine.
//   * report(g, cycles): adds the unit's own statistics group(s) to the timed core's report.
//   * Sync flags: a unit that increments sync flags when asynchronous work completes returns true
//     from signals_flags(). In the timed core the Machine then calls retire(now) before every
//     bundle (the unit increments the flags of the work done by `now`) and, for a `wait` whose
//     flag is short, flag_ready(flag, value, want): the cycle its increments bring the flag from
//     `value` to `want`, or -1 if they do not. In the functional interpreter (env.timed false) the
//     unit increments the flag at once when it starts the work.
//   * drain(): when the timed core's program has halted, completes the work still outstanding and
//     returns the cycle the last of it completed (-1: none); the core's run ends no earlier.
//   * Vector memory: a unit that reads or writes it checks the words against env.held (words a
//     pending split-phase exchange still receives; exchange.h) before it touches them.
// Functional and timed cores share every unit: the functional interpreter simply ignores timing.
// The unit's private state (FIFOs, busy-until cycles, scratch) lives in the unit, not in Machine.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>

#include "common/config.h"
#include "core/decoded.h"
#include "core/events.h"
#include "core/exchange.h"
#include "core/spec.h"
#include "core/state.h"
#include "report/stats.h"

namespace tessera::core {

class SparseCore;

struct OpTiming {
  int64_t start = 0;       // cycle the unit performed the op
  int32_t occupancy = 1;   // cycles the unit was busy with it
  int64_t dest_ready = 0;  // cycle its destination register may be read (if it has one)
};

// The timing of a one-cycle op: performed at `now`, its result ready after its latency class.
inline OpTiming fixed_timing(const CoreSpec& spec, const DecodedOp& op, int64_t now) {
  return OpTiming{now, 1, now + spec.latency_of(isa::op_info(op.op).latency)};
}

// What a unit may use of the core it belongs to; all references outlive the unit.
struct UnitEnv {
  const CoreSpec& spec;
  ArchState& state;          // registers and memories
  EventCounts& events;       // the core's event counters (energy and statistics)
  bool timed;                // the timed core (true) or the functional interpreter (false)
  const HeldReceives& held;  // vector memory words a pending xsync exchange holds (exchange.h)
  SparseCore& sparse;        // the processor's sparse core (dma.vh.sc signals its flags)
};

class CoreUnit {
 public:
  explicit CoreUnit(const UnitEnv& env)
      : m_spec(env.spec),
        m_state(env.state),
        m_events(env.events),
        m_timed(env.timed),
        m_held(env.held) {}
  virtual ~CoreUnit() = default;
  CoreUnit(const CoreUnit&) = delete;
  CoreUnit& operator=(const CoreUnit&) = delete;

  virtual int64_t ready(const DecodedOp& op, int64_t now, StallCause& cause) const = 0;
  virtual OpTiming execute(const DecodedOp& op, int64_t now) = 0;
  virtual void report(report::StatGroup& g, int64_t cycles) const {}
  virtual bool signals_flags() const { return false; }
  virtual void retire(int64_t now) {}
  virtual int64_t flag_ready(int flag, int64_t value, int64_t want) const { return -1; }
  virtual int64_t drain() { return -1; }

 protected:
  int words() const { return m_spec.sublanes * m_spec.lanes; }  // 32-bit words of one vreg
  OpTiming fixed(const DecodedOp& op, int64_t now) const { return fixed_timing(m_spec, op, now); }

  const CoreSpec& m_spec;
  ArchState& m_state;
  EventCounts& m_events;
  bool m_timed;
  const HeldReceives& m_held;
};

// One registered unit. `read_spec` declares and reads the unit's section of the core config
// (keys "core.<unit>.*", into its CoreSpec fields; called by read_core_spec in table order, so
// the section is also part of `tessera config --schema`); nullptr if it has none.
struct UnitRegistration {
  isa::Unit unit;  // executes every op whose unit column is this
  std::function<std::unique_ptr<CoreUnit>(const UnitEnv&)> make;
  void (*read_spec)(ConfigReader& reader, CoreSpec& spec) = nullptr;
};

using UnitTable = std::span<const UnitRegistration>;

// A factory for UnitRegistration::make: constructs U from the environment.
template <class U>
std::unique_ptr<CoreUnit> make_unit(const UnitEnv& env) {
  return std::make_unique<U>(env);
}

}  // namespace tessera::core
