#include "core/units/adam_launcher.h"

#include <algorithm>
#include <cmath>

namespace tessera::core {

AdamLauncher::AdamLauncher(const UnitEnv& env, DmaEngine& dma, HbmEncoder& encoder)
    : CoreUnit(env), m_dma(dma), m_encoder(encoder), m_adam(env.spec) {}

int64_t AdamLauncher::ready(const DecodedOp& op, int64_t now, StallCause& cause) const {
  cause = StallCause::DmaQueue;
  return std::max(now, m_adam.busy_until());
}

OpTiming AdamLauncher::execute(const DecodedOp& op, int64_t now) {
  const int64_t addr = m_state.sreg(op.a);
  const int64_t start = std::max(now, m_adam.busy_until());
  if (m_timed) m_adam.path().block(start, static_cast<int64_t>(std::ceil(m_dma.data_free())));
  const int64_t done = m_adam.run(m_state.hbm, addr, start, &m_encoder);
  if (m_timed) {
    for (const auto& [from, to] : m_adam.path().log()) m_dma.reserve(from, to);
    m_adam.add_completion(op.c, done);
  } else {
    m_state.flags[static_cast<size_t>(op.c)] += 1;
  }
  return OpTiming{start, 1, start + m_spec.latency_of(isa::LatencyClass::Dma)};
}

void AdamLauncher::retire(int64_t now) {
  m_adam.retire(now, m_state.flags);
}

int64_t AdamLauncher::flag_ready(int flag, int64_t value, int64_t want) const {
  return m_adam.flag_ready(flag, value, want);
}

}  // namespace tessera::core
