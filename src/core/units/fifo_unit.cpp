#include "core/units/fifo_unit.h"

#include <algorithm>
#include <cstring>

namespace tessera::core {

FifoUnit::FifoUnit(const UnitEnv& env, const Params& params)
    : CoreUnit(env),
      m_fifo(params.name, params.depth, env.spec.sublanes * env.spec.lanes),
      m_busy(params.busy),
      m_result(params.result),
      m_latency(params.latency) {}

int64_t FifoUnit::push_ready(int64_t now, StallCause& cause) const {
  int64_t t = std::max(now, m_input_free);
  cause = m_busy;
  if (!m_fifo.full() && m_fifo.slot_free_at() > t)
    t = m_fifo.slot_free_at(), cause = StallCause::FifoFull;
  return t;
}

int64_t FifoUnit::pop_ready(int64_t now, StallCause& cause) const {
  cause = m_result;
  return m_fifo.empty() ? now : m_fifo.front_ready();
}

OpTiming FifoUnit::push(int64_t now, const uint32_t* words) {
  const int64_t start = std::max({now, m_input_free, m_fifo.slot_free_at()});
  const int S = m_spec.sublanes;
  m_input_free = start + S;
  std::memcpy(m_fifo.push(start + S - 1 + m_spec.latency_of(m_latency)), words,
              static_cast<size_t>(this->words()) * 4);
  m_events.ext_elements += this->words();
  return OpTiming{start, S, start};
}

OpTiming FifoUnit::pop(const DecodedOp& op, int64_t now) {
  const int64_t start = std::max(now, m_fifo.front_ready());
  std::memcpy(m_state.vreg(op.d), m_fifo.pop(start), static_cast<size_t>(words()) * 4);
  m_events.vreg_elements += words();
  return OpTiming{start, 1, start + 1};
}

}  // namespace tessera::core
