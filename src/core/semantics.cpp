// Machine construction, readiness and the dispatch of every op to its unit's semantics
// (exec_scalar.cpp, exec_vector.cpp, exec_vmem.cpp, exec_mxu.cpp, exec_ext.cpp, exec_misc.cpp).
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "core/fault.h"
#include "core/machine.h"

namespace tessera::core {

using isa::Opcode;
using isa::Unit;

std::string_view to_string(StallCause c) {
  static constexpr std::string_view kNames[kNumStallCauses] = {
      "none",     "dependency", "branch",    "mxu_weights", "mxu_busy", "mxu_result",
      "xu_busy",  "xu_result",  "rpu_busy",  "rpu_result",  "eup_busy", "eup_result",
      "rng_busy", "fifo_full",  "dma_queue", "sync_wait",   "exchange"};
  return kNames[static_cast<int>(c)];
}

Machine::Machine(const CoreSpec& spec, bool timed_dma)
    : m_spec(spec),
      m_timed_dma(timed_dma),
      m_state(spec),
      m_mxu(spec),
      m_dma(spec),
      m_hbm_encoder(spec.hbm_encoding),
      m_adam(spec),
      m_eup("EUP", spec.eup_fifo, spec.sublanes * spec.lanes),
      m_rpu("reduce/permute", spec.rpu_fifo, spec.sublanes * spec.lanes),
      m_xu("transpose", spec.xu_fifo, spec.sublanes * spec.lanes),
      m_xu_matrix(static_cast<size_t>(spec.lanes) * spec.lanes, 0u),
      m_xu_slices((spec.lanes + spec.sublanes - 1) / spec.sublanes),
      m_rng_cycles((spec.sublanes * spec.lanes + spec.rng_words_per_cycle - 1) /
                   spec.rng_words_per_cycle),
      m_words(spec.sublanes * spec.lanes),
      m_fbuf(static_cast<size_t>(m_words), 0.0f),
      m_tmp(static_cast<size_t>(m_words), 0u) {}

void Machine::prepare(const DecodedBundle& b) {
  for (int i = 0; i < b.n_copies; ++i) {
    const ShadowCopy& c = b.copies[i];
    switch (c.file) {
      case isa::RegFile::Scalar:
        m_state.sreg(c.to) = m_state.sreg(c.from);
        break;
      case isa::RegFile::Vector:
        std::memcpy(m_state.vreg(c.to), m_state.vreg(c.from), static_cast<size_t>(m_words) * 4);
        break;
      case isa::RegFile::Mask:
        std::memcpy(m_state.mreg(c.to), m_state.mreg(c.from), static_cast<size_t>(m_words));
        break;
    }
  }
}

OpTiming Machine::fixed(const DecodedOp& op, int64_t now) const {
  return OpTiming{now, 1, now + m_spec.latency_of(isa::op_info(op.op).latency)};
}

int64_t Machine::ready(const DecodedOp& op, int64_t now, StallCause& cause) const {
  int64_t t = now;
  switch (op.op) {
    case Opcode::MLW:
      t = m_mxu.mlw_ready(now), cause = StallCause::MxuBusy;
      break;
    case Opcode::MFLIP:
      t = m_mxu.mflip_ready(now), cause = StallCause::MxuWeights;
      break;
    case Opcode::MMUL:
    case Opcode::MMULST:
    case Opcode::MMULACC:
    case Opcode::MMULOUT:
      t = m_mxu.mmul_ready(now), cause = StallCause::MxuBusy;
      break;
    case Opcode::MPOP:
      if (m_mxu.fifo_occupancy() > 0) t = m_mxu.mpop_ready(now), cause = StallCause::MxuResult;
      break;
    case Opcode::DMAHV:
    case Opcode::DMAVH:
    case Opcode::DMAHS:
    case Opcode::DMASH:
    case Opcode::DMAHV2:
    case Opcode::DMAVH2:
      t = m_dma.queue_ready(now), cause = StallCause::DmaQueue;
      break;
    case Opcode::ADAMSTART:
      t = m_adam.busy_until(), cause = StallCause::DmaQueue;
      break;
    case Opcode::XWAIT:
    case Opcode::SYNC:
    case Opcode::XSYNC:
    case Opcode::HALT:  // xwait without one: execute faults
      if (m_exchange_pending) t = m_exchange_done, cause = StallCause::Exchange;
      break;
    case Opcode::WAIT: {
      const int64_t value = m_state.flags[op.a];
      if (value >= op.imm) break;
      int64_t at = m_dma.flag_ready(op.a, value, op.imm);
      if (at < 0) at = m_adam.flag_ready(op.a, value, op.imm);  // a flag adam.start signals
      if (at < 0)
        throw UnitFault(
            fmt::format("wait on sync flag {} for {} can never finish: the flag is {} and "
                        "no outstanding DMA signals it enough",
                        op.a, op.imm, value));
      t = at, cause = StallCause::SyncWait;
      break;
    }
    default:
      if (isa::op_info(op.op).slot == isa::SlotClass::Ext) t = ext_ready(op, now, cause);
      break;
  }
  return std::max(t, now);
}

OpTiming Machine::execute(const DecodedOp& op, int64_t now, Control& ctl) {
  ++m_ev.unit_ops[static_cast<int>(isa::op_info(op.op).unit)];
  if (op.op == Opcode::ADAMSTART) return exec_adam(op, now);
  if (op.op == Opcode::HALT) complete_exchange();  // ready() has held the bundle until it was done
  if (is_exchange_op(op.op)) return exec_exchange(op, now, ctl);
  switch (isa::op_info(op.op).slot) {
    case isa::SlotClass::Scalar:
      return exec_scalar(op, now, ctl);
    case isa::SlotClass::VecAlu:
      return exec_vector(op, now);
    case isa::SlotClass::VecLoad:
    case isa::SlotClass::VecStore:
      return exec_vmem(op, now);
    case isa::SlotClass::Matrix:
      return exec_mxu(op, now);
    case isa::SlotClass::Ext:
      return exec_ext(op, now);
    case isa::SlotClass::Misc:
      return exec_misc(op, now);
    case isa::SlotClass::Any:
      break;
  }
  return OpTiming{now, 1, now};
}

}  // namespace tessera::core
