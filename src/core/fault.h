// Simulated faults: a misbehaving program (out-of-range address, pop from an empty FIFO, ...).
//
// A unit that detects misbehaviour throws UnitFault with the reason only; the core catches it and
// throws SimFault, a tessera::Error whose `where` names the PC, the cycle and the disassembled
// bundle. Faults are never host crashes and never undefined behaviour.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/error.h"

namespace tessera::core {

class UnitFault : public std::runtime_error {
 public:
  explicit UnitFault(const std::string& why) : std::runtime_error(why) {}
};

class SimFault : public Error {
 public:
  SimFault(int64_t pc, int64_t cycle, const std::string& bundle_text, const std::string& why)
      : Error(fmt::format("simulated fault at pc {} cycle {} [{}]", pc, cycle, bundle_text), why),
        m_pc(pc),
        m_cycle(cycle) {}
  int64_t pc() const { return m_pc; }
  int64_t cycle() const { return m_cycle; }

 private:
  int64_t m_pc;
  int64_t m_cycle;
};

}  // namespace tessera::core
