// The functional interpreter: executes bundles one by one with no timing; the living definition of
// the instruction set. Values come from the same Machine semantics as the timed core (core.h);
// DMA completes instantly and a wait that its flag cannot satisfy faults. %cycle reads the number
// of bundles executed before the current one.
#pragma once

#include <cstdint>

#include "core/loader.h"
#include "core/machine.h"

namespace tessera::core {

class FunctionalCore {
 public:
  FunctionalCore(const CoreSpec& spec, const isa::Program& program, RunOptions options = {});

  // Runs until halt. Throws SimFault (pc, bundle count as the cycle, bundle text) on a fault.
  void run();
  // Executes one bundle; returns false once the core has halted or stopped at a `sync`.
  bool step();
  // BSP (system/system.h): runs until `sync` (true: resume() continues) or halt (false). run()
  // instead delivers the core's own sends at each sync (exchange.h) and continues.
  bool run_to_sync();
  void resume() { m_at_sync = false; }

  int64_t bundles() const { return m_bundles; }
  const ArchState& state() const { return m_machine.state(); }
  ArchState& state() { return m_machine.state(); }
  Machine& machine() { return m_machine; }
  const Machine& machine() const { return m_machine; }

 private:
  CoreSpec m_spec;
  Machine m_machine;
  DecodedProgram m_program;
  RunOptions m_options;
  int64_t m_bundles = 0;
  bool m_at_sync = false;
};

}  // namespace tessera::core
