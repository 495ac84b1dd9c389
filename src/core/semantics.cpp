// Machine construction, readiness and the dispatch of every op to its unit's semantics: a
// registered unit (units.h) or the Machine's own (exec_scalar.cpp, exec_sync.cpp,
// exec_exchange.cpp).
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "common/error.h"
#include "core/fault.h"
#include "core/machine.h"
#include "core/units/dma_unit.h"
#include "core/units/mxu_unit.h"

namespace tessera::core {

using isa::Opcode;
using isa::Unit;

std::string_view to_string(StallCause c) {
  static constexpr std::string_view kNames[kNumStallCauses] = {
#define X(e, name, what) name,
#include "core/stall_causes.def"
#undef X
  };
  return kNames[static_cast<int>(c)];
}

Machine::Machine(const CoreSpec& spec, bool timed_dma, UnitTable units)
    : m_spec(spec),
      m_timed_dma(timed_dma),
      m_state(spec),
      m_sparse(spec),
      m_words(spec.sublanes * spec.lanes) {
  const UnitEnv env{m_spec, m_state, m_ev, m_timed_dma, m_held, m_sparse};
  for (const UnitRegistration& r : units) {
    CoreUnit*& slot = m_unit_of[static_cast<size_t>(r.unit)];
    if (slot != nullptr)
      throw Error("core",
                  fmt::format("two units registered for the {} ops", isa::to_string(r.unit)));
    m_units.push_back(r.make(env));
    slot = m_units.back().get();
    if (slot->signals_flags()) m_flag_units.push_back(slot);
  }
  for (const isa::OpInfo& info : isa::kOpTable)
    if (!is_exchange_op(info.op))
      m_unit_of_op[static_cast<size_t>(info.op)] = m_unit_of[static_cast<size_t>(info.unit)];
}

int Machine::mxu_count() const {
  return unit_of_type<MxuUnit>().count();
}

Mxu& Machine::mxu(int index) {
  return unit_of_type<MxuUnit>().mxu(index);
}

const Mxu& Machine::mxu(int index) const {
  return unit_of_type<MxuUnit>().mxu(index);
}

MxuStats Machine::mxu_stats() const {
  return unit_of_type<MxuUnit>().total_stats();
}

HbmEncoder& Machine::hbm_encoder() {
  return unit_of_type<DmaUnit>().hbm_encoder();
}

const HbmEncoder& Machine::hbm_encoder() const {
  return unit_of_type<DmaUnit>().hbm_encoder();
}

AdamUnit& Machine::adam() {
  return unit_of_type<DmaUnit>().adam();
}

const AdamUnit& Machine::adam() const {
  return unit_of_type<DmaUnit>().adam();
}

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
  return fixed_timing(m_spec, op, now);
}

int64_t Machine::flag_ready(int flag, int64_t value, int64_t want) const {
  int64_t at = -1;
  for (size_t i = 0; at < 0 && i < m_flag_units.size(); ++i)
    at = m_flag_units[i]->flag_ready(flag, value, want);
  if (at < 0) at = m_sparse.flag_ready(flag, value, want);
  return at;
}

int64_t Machine::ready(const DecodedOp& op, int64_t now, StallCause& cause) const {
  if (const CoreUnit* u = m_unit_of_op[static_cast<size_t>(op.op)])
    return std::max(u->ready(op, now, cause), now);
  int64_t t = now;
  switch (op.op) {
    case Opcode::XWAIT:
    case Opcode::SYNC:
    case Opcode::XSYNC:
    case Opcode::HALT:  // xwait without one: execute faults
      if (m_exchange_pending) t = m_exchange_done, cause = StallCause::Exchange;
      break;
    case Opcode::WAIT: {
      const int64_t value = m_state.flags[op.a];
      if (value >= op.imm) break;
      const int64_t at = flag_ready(op.a, value, op.imm);
      if (at < 0) throw wait_fault(op, value);
      t = at, cause = StallCause::SyncWait;
      break;
    }
    default:
      break;
  }
  return std::max(t, now);
}

OpTiming Machine::execute(const DecodedOp& op, int64_t now, Control& ctl) {
  ++m_ev.unit_ops[static_cast<size_t>(op.unit)];
  if (CoreUnit* u = m_unit_of_op[static_cast<size_t>(op.op)]) return u->execute(op, now);
  const isa::OpInfo& info = isa::op_info(op.op);
  if (op.op == Opcode::HALT) complete_exchange();  // ready() has held the bundle until it was done
  if (is_exchange_op(op.op)) return exec_exchange(op, now, ctl);
  switch (info.slot) {
    case isa::SlotClass::Scalar:
      return exec_scalar(op, now, ctl);
    case isa::SlotClass::VecAlu:
    case isa::SlotClass::VecLoad:
    case isa::SlotClass::VecStore:
    case isa::SlotClass::Matrix:
    case isa::SlotClass::Ext:
      break;
    case isa::SlotClass::Misc:
      if (op.unit == Unit::Sync) return exec_sync(op, now);
      break;
    case isa::SlotClass::Any:
      return OpTiming{now, 1, now};
  }
  throw UnitFault(fmt::format("{}: no unit of this core executes {} ops", info.mnemonic,
                              isa::to_string(info.unit)));
}

int64_t Machine::drain() {
  int64_t last = -1;
  for (const auto& u : m_units) last = std::max(last, u->drain());
  return last;
}

}  // namespace tessera::core
