// The timed core: issues one bundle per cycle when nothing stalls, computing values with the same
// Machine semantics as the functional interpreter (functional and timing in one pass).
//
// Issue rule for a bundle (event driven: stall cycles are skipped in one step):
//   T = max(previous issue + 1,
//           taken-branch redirect: previous issue + latency(branch),
//           ready cycle of every source register (scoreboard: a result is ready at its op's start
//             + latency of its class; pops and RNG as machine.h says),
//           Machine::ready of every op on the state before the bundle: MXU readiness, FIFO
//             results, unit input ports, DMA queue room, sync flags).
//   A destination's ready cycle never moves backwards (a short-latency write after a long one
//   waits for it), so values always match sequential execution.
//   DMA requests whose completion cycle is <= T complete before the bundle executes.
// Stall accounting: the T - (previous issue + 1) stall cycles of a bundle are all charged to ONE
// cause: the constraint with the latest ready cycle (ties go to the first checked, in the order
// branch, registers, then slots S0..MISC).
// End of run: the halt bundle issues at H; the core then drains: every outstanding DMA completes,
// and cycles = max(H + 1, last DMA completion, latest register ready cycle).
// Faults: SimFault naming pc, the cycle and the bundle text; a wait no outstanding DMA can satisfy
// and a pop from a FIFO with nothing pushed fault instead of hanging.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/loader.h"
#include "core/machine.h"
#include "core/mxu_attribution.h"
#include "report/stats.h"
#include "report/trace.h"

namespace tessera::core {

struct TimedOptions : RunOptions {
  report::TraceSink* trace = nullptr;  // every issued op as a span on its unit's track + stalls
};

class Core {
 public:
  Core(const CoreSpec& spec, const isa::Program& program, TimedOptions options = {});
  // The same with the code already decoded for `spec` (decode_program of `program.code`) and the
  // processor index word `index`: the core program.with_index(index) would give, without copying
  // the program; the cores of a system running one image share one decoding.
  Core(const CoreSpec& spec, const isa::Program& program,
       std::shared_ptr<const DecodedProgram> decoded, uint32_t index, TimedOptions options = {});

  // Runs until halt and drains. Throws SimFault on a fault. A `sync` outside a system delivers
  // the core's own sends at once (exchange.h) and continues.
  void run();
  // BSP (system/system.h): runs until the core issues `sync` (returns true; the core waits at the
  // barrier, arriving at sync_arrival()) or halts and drains (returns false).
  bool run_to_sync();
  int64_t sync_arrival() const { return m_last_issue + 1; }
  // Leaves the barrier: the next bundle issues no earlier than `cycle` (the wait is charged to
  // StallCause::Exchange).
  void resume(int64_t cycle);

  // Replaces the code with `program`'s and loads its data segments, keeping every other piece of
  // machine state (memories, registers, flags, clock and statistics): the next run() starts at
  // bundle 0 at the cycle the previous run ended (a compiled training step run again and again).
  void load(const isa::Program& program);
  // The same with the code already decoded for this core's configuration (decode_program of
  // `program.code`): a host that runs the same programs again and again decodes them once.
  void load(const isa::Program& program, std::shared_ptr<const DecodedProgram> decoded);
  // And with the processor index word `index`: load(program.with_index(index), decoded) without
  // copying the program.
  void load(const isa::Program& program, std::shared_ptr<const DecodedProgram> decoded,
            uint32_t index);
  // Restoring a checkpoint of a machine whose state between programs is its memories and its
  // clock (runtime/data_parallel.h): the core has been idle until `cycle` (>= cycles(); Error
  // otherwise): cycles() becomes `cycle` and no later bundle issues, nor register becomes ready,
  // before it. Statistics are not changed (the idle time is charged to no stall cause).
  void advance_clock(int64_t cycle);
  // The machine state, for a host that writes inputs into HBM between runs.
  ArchState& host_state() { return m_machine.state(); }

  int64_t cycles() const { return m_cycles; }
  int64_t bundles() const { return m_bundles; }
  int64_t stall_cycles(StallCause c) const { return m_stalls[static_cast<int>(c)]; }
  int64_t unit_busy_cycles(isa::Unit u) const { return m_busy[static_cast<int>(u)]; }
  const ArchState& state() const { return m_machine.state(); }
  Machine& machine() { return m_machine; }
  const Machine& machine() const { return m_machine; }
  const CoreSpec& spec() const { return m_spec; }
  // Attributes every executed mmul* to its pc's region (core/mxu_attribution.h); nullptr: off.
  // The caller calls attribution->begin(...) first and keeps it alive while set.
  void set_mxu_attribution(MxuAttribution* attribution) { m_mxu_attr = attribution; }

  // Statistics of the run: cycles, bundles, seconds, stalls by cause, per-unit busy cycles and
  // utilisation, MXU, memory traffic, energy.
  report::StatGroup stats() const;

 private:
  void issue_one();
  void finish();
  int64_t& reg_ready(isa::RegRef r);
  void account(const DecodedOp& op, const OpTiming& t, int64_t pc);

  CoreSpec m_spec;
  Machine m_machine;
  std::shared_ptr<const DecodedProgram> m_program;  // shared with the host that loaded it
  TimedOptions m_options;
  int64_t m_next = 0;         // earliest issue cycle of the next bundle
  int64_t m_fetch_ready = 0;  // taken-branch redirect
  int64_t m_last_issue = -1;
  int64_t m_cycles = 0;
  int64_t m_bundles = 0;
  int64_t m_program_first_bundle = 0;  // m_bundles at the last load(): the limit counts from it
  bool m_at_sync = false;
  MxuAttribution* m_mxu_attr = nullptr;
  std::vector<int64_t> m_sready, m_vready, m_mready;
  std::array<int64_t, kNumStallCauses> m_stalls{};
  std::array<int64_t, isa::kNumUnits> m_busy{}, m_busy_until{};
};

// Memory traffic (bytes per level) and energy of a machine into `g`; both interpreters report
// through this. `cycles` sizes the static energy and the average bandwidth and power.
void report_events(const Machine& m, int64_t cycles, report::StatGroup& g);
// Ops per unit into g.ops (the timed core reports them under units.<unit>.ops).
void report_ops(const Machine& m, report::StatGroup& g);

}  // namespace tessera::core
