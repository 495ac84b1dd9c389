// Sync flag semantics (the flags of DMA requests, the Adam unit and other flag-signalling units):
//   wait #A, imm     waits until flag A >= imm, then flag A -= imm (a wait nothing can satisfy
//                    faults; its readiness: Machine::ready)
//   signal #A, imm   flag A += imm
#include <fmt/format.h>

#include "core/fault.h"
#include "core/machine.h"

namespace tessera::core {

using isa::Opcode;

UnitFault Machine::wait_fault(const DecodedOp& op, int64_t value) {
  return UnitFault(fmt::format(
      "wait on sync flag {} for {} can never finish: the flag is {} and no outstanding DMA "
      "signals it enough",
      op.a, op.imm, value));
}

OpTiming Machine::exec_sync(const DecodedOp& op, int64_t now) {
  ArchState& s = m_state;
  switch (op.op) {
    case Opcode::WAIT: {
      const int64_t value = s.flags[op.a];
      if (value < op.imm) throw wait_fault(op, value);
      s.flags[op.a] = static_cast<uint32_t>(value - op.imm);
      return fixed(op, now);
    }
    case Opcode::SIGNAL:
      s.flags[op.a] += static_cast<uint32_t>(op.imm);
      return fixed(op, now);
    default:
      throw UnitFault(
          fmt::format("{}: not implemented by this core", isa::op_info(op.op).mnemonic));
  }
}

}  // namespace tessera::core
