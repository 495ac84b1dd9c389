#include "core/units/rng_unit.h"

#include <algorithm>

namespace tessera::core {

RngUnit::RngUnit(const UnitEnv& env)
    : CoreUnit(env),
      m_cycles((env.spec.sublanes * env.spec.lanes + env.spec.rng_words_per_cycle - 1) /
               env.spec.rng_words_per_cycle) {}

void RngUnit::read_spec(ConfigReader& r, CoreSpec& s) {
  s.rng_words_per_cycle =
      static_cast<int>(r.get_int("core.rng.words_per_cycle", 128, {1, 1 << 20}, "words/cycle",
                                 "random 32-bit words generated per cycle"));
}

int64_t RngUnit::ready(const DecodedOp& op, int64_t now, StallCause& cause) const {
  cause = StallCause::RngBusy;
  return std::max(now, m_free);
}

OpTiming RngUnit::execute(const DecodedOp& op, int64_t now) {
  m_events.vreg_elements += static_cast<int64_t>(op.vreg_reads) * words();
  const int64_t start = std::max(now, m_free);
  if (op.op == isa::Opcode::RNGSEED) {
    m_free = start + 1;
    m_state.rng.seed = m_state.sreg(op.a);
    m_state.rng.position = 0;
    return OpTiming{start, 1, start};
  }
  m_free = start + m_cycles;
  m_state.rng.generate(m_state.vreg(op.d), words());
  m_events.ext_elements += words();
  m_events.vreg_elements += words();
  return OpTiming{start, m_cycles,
                  start + m_cycles - 1 + m_spec.latency_of(isa::LatencyClass::Rng)};
}

}  // namespace tessera::core
