#include "core/units/eup_unit.h"

#include <cstring>

#include "numerics/eup.h"

namespace tessera::core {

using isa::Opcode;

namespace {

numerics::EupFunc eup_func(Opcode op) {
  switch (op) {
    case Opcode::EEXP:
      return numerics::EupFunc::Exp;
    case Opcode::ELOG:
      return numerics::EupFunc::Log;
    case Opcode::ERCP:
      return numerics::EupFunc::Rcp;
    case Opcode::ERSQRT:
      return numerics::EupFunc::Rsqrt;
    case Opcode::ESQRT:
      return numerics::EupFunc::Sqrt;
    default:
      return numerics::EupFunc::Tanh;
  }
}

}  // namespace

EupUnit::EupUnit(const UnitEnv& env)
    : FifoUnit(env, {"EUP", env.spec.eup_fifo, StallCause::EupBusy, StallCause::EupResult,
                     isa::LatencyClass::Eup}),
      m_buf(static_cast<size_t>(words()), 0.0f) {}

void EupUnit::read_spec(ConfigReader& r, CoreSpec& s) {
  s.eup_fifo =
      static_cast<int>(r.get_int("core.eup.fifo", 4, {1, 1024}, "vregs", "EUP result FIFO depth"));
}

int64_t EupUnit::ready(const DecodedOp& op, int64_t now, StallCause& cause) const {
  return op.op == Opcode::EPOP ? pop_ready(now, cause) : push_ready(now, cause);
}

OpTiming EupUnit::execute(const DecodedOp& op, int64_t now) {
  charge_reads(op);
  if (op.op == Opcode::EPOP) return pop(op, now);
  std::memcpy(m_buf.data(), m_state.vreg(op.a), static_cast<size_t>(words()) * 4);
  numerics::eup_apply(eup_func(op.op), m_buf.data(), m_buf.data(), words());
  // push copies the words (memcpy), so the fp32 buffer is passed as they are.
  return push(now, reinterpret_cast<const uint32_t*>(m_buf.data()));
}

}  // namespace tessera::core
