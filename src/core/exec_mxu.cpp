// Matrix unit ops: operands go to core::Mxu (its header defines function and timing) as fp32.
#include <algorithm>
#include <cstring>

#include "core/machine.h"

namespace tessera::core {

using isa::Opcode;

OpTiming Machine::exec_mxu(const DecodedOp& op, int64_t now) {
  ArchState& s = m_state;
  const size_t bytes = static_cast<size_t>(m_words) * 4;
  // mlw / mmul copy their operand's words out of the vreg (Mxu reads `v` only through memcpy).
  const float* operand = reinterpret_cast<const float*>(s.vreg(op.a));
  m_ev.vreg_elements += static_cast<int64_t>(m_words) * (op.op == Opcode::MFLIP ? 0 : 1);
  switch (op.op) {
    case Opcode::MLW: {
      m_mxu.check_mlw();
      const int64_t start = m_mxu.mlw_ready(now);
      m_mxu.mlw(operand, start);
      return OpTiming{start, m_spec.sublanes, start};
    }
    case Opcode::MFLIP: {
      m_mxu.check_mflip();
      const int64_t start = m_mxu.mflip_ready(now);
      m_mxu.mflip(start);
      return OpTiming{start, 1, start};
    }
    case Opcode::MMUL:
    case Opcode::MMULST:
    case Opcode::MMULACC:
    case Opcode::MMULOUT: {
      const MmulMode mode = op.op == Opcode::MMUL      ? MmulMode::ToFifo
                            : op.op == Opcode::MMULST  ? MmulMode::Store
                            : op.op == Opcode::MMULACC ? MmulMode::Accumulate
                                                       : MmulMode::AccumulateOut;
      const int64_t block = mode == MmulMode::ToFifo ? 0 : static_cast<int32_t>(s.sreg(op.b));
      m_mxu.check_mmul(mode, block);
      const int64_t start = m_mxu.mmul_ready(now);
      m_mxu.mmul(operand, mode, block, start);
      return OpTiming{start, static_cast<int32_t>(m_mxu.last_mmul_occupancy()), start};
    }
    case Opcode::MPOP: {
      m_mxu.check_mpop();
      const int64_t start = m_mxu.mpop_ready(now);
      m_mxu.mpop(m_fbuf.data(), start);
      std::memcpy(s.vreg(op.d), m_fbuf.data(), bytes);
      return OpTiming{start, 1, start + m_spec.latency_of(isa::LatencyClass::Matrix)};
    }
    default:
      break;
  }
  return fixed(op, now);
}

}  // namespace tessera::core
