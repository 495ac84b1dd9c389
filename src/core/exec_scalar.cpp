// Scalar unit semantics: integer ALU (int32, wrapping), scalar memory, branches, loop, special
// registers, halt.
//
// Special registers: %cycle_lo / %cycle_hi are the low / high 32 bits of the issue cycle of the
// bundle (the functional interpreter counts one cycle per bundle) and are read-only (smtsr
// faults); %pid and %nproc are loaded from the program (processor index, processor count) and
// may be written.
#include <algorithm>

#include <fmt/format.h>

#include "core/fault.h"
#include "core/machine.h"

namespace tessera::core {

using isa::Opcode;

namespace {

int32_t as_signed(uint32_t x) {
  return static_cast<int32_t>(x);
}

uint32_t alu(Opcode op, uint32_t a, uint32_t b) {
  switch (op) {
    case Opcode::SADD:
    case Opcode::SADDI:
      return a + b;
    case Opcode::SSUB:
      return a - b;
    case Opcode::SMUL:
    case Opcode::SMULI:
      return a * b;
    case Opcode::SAND:
    case Opcode::SANDI:
      return a & b;
    case Opcode::SOR:
    case Opcode::SORI:
      return a | b;
    case Opcode::SXOR:
    case Opcode::SXORI:
      return a ^ b;
    case Opcode::SSHL:
    case Opcode::SSHLI:
      return a << (b & 31);
    case Opcode::SSHR:
    case Opcode::SSHRI:
      return a >> (b & 31);
    case Opcode::SSRA:
    case Opcode::SSRAI:
      return static_cast<uint32_t>(as_signed(a) >> (b & 31));
    case Opcode::SSLT:
    case Opcode::SSLTI:
      return as_signed(a) < as_signed(b) ? 1u : 0u;
    case Opcode::SSLTU:
      return a < b ? 1u : 0u;
    case Opcode::SSEQ:
      return a == b ? 1u : 0u;
    case Opcode::SMIN:
      return static_cast<uint32_t>(std::min(as_signed(a), as_signed(b)));
    case Opcode::SMAX:
      return static_cast<uint32_t>(std::max(as_signed(a), as_signed(b)));
    default:
      return 0;
  }
}

bool branch_taken(Opcode op, uint32_t a, uint32_t b) {
  switch (op) {
    case Opcode::BEQ:
      return a == b;
    case Opcode::BNE:
      return a != b;
    case Opcode::BLT:
      return as_signed(a) < as_signed(b);
    case Opcode::BGE:
      return as_signed(a) >= as_signed(b);
    case Opcode::BLTU:
      return a < b;
    case Opcode::BGEU:
      return a >= b;
    case Opcode::JMP:
      return true;
    default:
      return false;
  }
}

}  // namespace

OpTiming Machine::exec_scalar(const DecodedOp& op, int64_t now, Control& ctl) {
  ArchState& s = m_state;
  ++m_ev.scalar_ops;
  const uint32_t imm = static_cast<uint32_t>(op.imm);
  switch (op.op) {
    case Opcode::HALT:
      ctl.halt = true;
      break;
    case Opcode::SADD:
    case Opcode::SSUB:
    case Opcode::SMUL:
    case Opcode::SAND:
    case Opcode::SOR:
    case Opcode::SXOR:
    case Opcode::SSHL:
    case Opcode::SSHR:
    case Opcode::SSRA:
    case Opcode::SSLT:
    case Opcode::SSLTU:
    case Opcode::SSEQ:
    case Opcode::SMIN:
    case Opcode::SMAX:
      s.sreg(op.d) = alu(op.op, s.sreg(op.a), s.sreg(op.b));
      break;
    case Opcode::SADDI:
    case Opcode::SMULI:
    case Opcode::SANDI:
    case Opcode::SORI:
    case Opcode::SXORI:
    case Opcode::SSHLI:
    case Opcode::SSHRI:
    case Opcode::SSRAI:
    case Opcode::SSLTI:
      s.sreg(op.d) = alu(op.op, s.sreg(op.a), imm);
      break;
    case Opcode::SLI:
      s.sreg(op.d) = imm;
      break;
    case Opcode::SMOV:
      s.sreg(op.d) = s.sreg(op.a);
      break;
    case Opcode::SLD:
    case Opcode::SST: {
      const int64_t addr = int64_t{as_signed(s.sreg(op.a))} + op.imm;
      if (addr < 0 || addr >= s.smem.size())
        throw UnitFault(fmt::format("{}: scalar memory address {} out of range 0..{}",
                                    isa::op_info(op.op).mnemonic, addr, s.smem.size() - 1));
      if (op.op == Opcode::SLD) {
        s.sreg(op.d) = s.smem[addr];
        m_ev.smem_read_bytes += 4;
      } else {
        s.smem[addr] = s.sreg(op.b);
        m_ev.smem_write_bytes += 4;
      }
      break;
    }
    case Opcode::BEQ:
    case Opcode::BNE:
    case Opcode::BLT:
    case Opcode::BGE:
    case Opcode::BLTU:
    case Opcode::BGEU:
    case Opcode::JMP:
      if (branch_taken(op.op, s.sreg(op.a), s.sreg(op.b))) ctl.taken = true, ctl.target = op.imm;
      break;
    case Opcode::LOOP: {
      const uint32_t v = s.sreg(op.a) - 1;
      s.sreg(op.d) = v;
      if (v != 0) ctl.taken = true, ctl.target = op.imm;
      return OpTiming{now, 1, now + m_spec.latency_of(isa::LatencyClass::Scalar)};
    }
    case Opcode::SMFSR: {
      uint32_t v = 0;
      switch (static_cast<isa::SpecialReg>(op.imm)) {
        case isa::SpecialReg::CycleLo:
          v = static_cast<uint32_t>(m_cycle);
          break;
        case isa::SpecialReg::CycleHi:
          v = static_cast<uint32_t>(static_cast<uint64_t>(m_cycle) >> 32);
          break;
        case isa::SpecialReg::Pid:
          v = s.pid;
          break;
        case isa::SpecialReg::NProc:
          v = s.nproc;
          break;
      }
      s.sreg(op.d) = v;
      break;
    }
    case Opcode::SMTSR:
      switch (static_cast<isa::SpecialReg>(op.imm)) {
        case isa::SpecialReg::Pid:
          s.pid = s.sreg(op.a);
          break;
        case isa::SpecialReg::NProc:
          s.nproc = s.sreg(op.a);
          break;
        default:
          throw UnitFault(fmt::format("smtsr: {} is read-only", isa::kSpecialRegName[op.imm]));
      }
      break;
    default:
      break;
  }
  return fixed(op, now);
}

}  // namespace tessera::core
