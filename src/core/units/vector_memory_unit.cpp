#include "core/units/vector_memory_unit.h"

#include <cstring>

#include <fmt/format.h>

#include "core/fault.h"

namespace tessera::core {

using isa::Opcode;

VectorMemoryUnit::VectorMemoryUnit(const UnitEnv& env)
    : CoreUnit(env), m_gather(static_cast<size_t>(words()), 0u) {}

int64_t VectorMemoryUnit::checked_row(int64_t row, const DecodedOp& op) const {
  if (row < 0 || row >= m_spec.vmem_rows())
    throw UnitFault(fmt::format("{}: vector memory row {} out of range 0..{}",
                                isa::op_info(op.op).mnemonic, row, m_spec.vmem_rows() - 1));
  if (!m_held.empty()) m_held.check(row * m_spec.lanes, m_spec.lanes, isa::op_info(op.op).mnemonic);
  return row;
}

namespace {

int64_t sgn(uint32_t x) {
  return static_cast<int32_t>(x);
}

}  // namespace

OpTiming VectorMemoryUnit::execute(const DecodedOp& op, int64_t now) {
  ArchState& s = m_state;
  const int S = m_spec.sublanes, L = m_spec.lanes, n = words();
  const bool load = isa::op_info(op.op).slot == isa::SlotClass::VecLoad;
  // Loads: base register a, stride register b / index vreg b. Stores: data vreg a, base b,
  // stride / index / mask c.
  const int64_t base = sgn(s.sreg(load ? op.a : op.b)) + op.imm;
  const uint8_t aux = load ? op.b : op.c;
  m_events.vreg_elements += static_cast<int64_t>(op.vreg_reads + (load ? 1 : 0)) * n;
  const int64_t bytes = int64_t{4} * n;
  if (load)
    m_events.vmem_read_bytes += bytes;
  else
    m_events.vmem_write_bytes += bytes;
  uint32_t* mem = s.vmem.data();
  switch (op.op) {
    case Opcode::VLD:
    case Opcode::VLDS:
    case Opcode::VST:
    case Opcode::VSTS:
    case Opcode::VSTM: {
      const int64_t stride =
          (op.op == Opcode::VLDS || op.op == Opcode::VSTS) ? sgn(s.sreg(aux)) : 1;
      for (int r = 0; r < S; ++r) checked_row(base + r * stride, op);
      if (stride == 1 && op.op != Opcode::VSTM) {  // S consecutive rows: one block copy
        uint32_t* rows = mem + base * L;
        if (load)
          std::memcpy(s.vreg(op.d), rows, static_cast<size_t>(n) * 4);
        else
          std::memcpy(rows, s.vreg(op.a), static_cast<size_t>(n) * 4);
        break;
      }
      for (int r = 0; r < S; ++r) {
        uint32_t* row = mem + (base + r * stride) * L;
        if (load) {
          std::memcpy(s.vreg(op.d) + static_cast<size_t>(r) * L, row, static_cast<size_t>(L) * 4);
        } else if (op.op == Opcode::VSTM) {
          const uint32_t* v = s.vreg(op.a) + static_cast<size_t>(r) * L;
          const uint8_t* m = s.mreg(aux) + static_cast<size_t>(r) * L;
          for (int l = 0; l < L; ++l)
            if (m[l]) row[l] = v[l];
        } else {
          std::memcpy(row, s.vreg(op.a) + static_cast<size_t>(r) * L, static_cast<size_t>(L) * 4);
        }
      }
      break;
    }
    case Opcode::VLDX:
    case Opcode::VSTX: {
      const uint32_t* idx = s.vreg(aux);
      const int64_t words = s.vmem.size();
      for (int i = 0; i < n; ++i) {
        const int64_t w = base * L + sgn(idx[i]);
        if (w < 0 || w >= words)
          throw UnitFault(
              fmt::format("{}: element {} addresses vector memory word {} out of range 0..{}",
                          isa::op_info(op.op).mnemonic, i, w, words - 1));
        if (!m_held.empty()) m_held.check(w, 1, isa::op_info(op.op).mnemonic);
      }
      if (load) {
        uint32_t* d = s.vreg(op.d);
        for (int i = 0; i < n; ++i) m_gather[i] = mem[base * L + sgn(idx[i])];
        std::memcpy(d, m_gather.data(), static_cast<size_t>(n) * 4);
      } else {
        const uint32_t* v = s.vreg(op.a);
        for (int i = 0; i < n; ++i) mem[base * L + sgn(idx[i])] = v[i];
      }
      break;
    }
    default:
      break;
  }
  return fixed(op, now);
}

}  // namespace tessera::core
