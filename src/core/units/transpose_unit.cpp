#include "core/units/transpose_unit.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "core/fault.h"

namespace tessera::core {

using isa::Opcode;

TransposeUnit::TransposeUnit(const UnitEnv& env)
    : FifoUnit(env, {"transpose", env.spec.xu_fifo, StallCause::XuBusy, StallCause::XuResult,
                     isa::LatencyClass::Transpose}),
      m_matrix(static_cast<size_t>(env.spec.lanes) * env.spec.lanes, 0u),
      m_slices((env.spec.lanes + env.spec.sublanes - 1) / env.spec.sublanes) {}

void TransposeUnit::read_spec(ConfigReader& r, CoreSpec& s) {
  s.xu_fifo = static_cast<int>(
      r.get_int("core.xu.fifo", 16, {1, 1024}, "slices", "transpose unit FIFO depth"));
}

int64_t TransposeUnit::ready(const DecodedOp& op, int64_t now, StallCause& cause) const {
  if (op.op == Opcode::XPOP) return pop_ready(now, cause);
  cause = StallCause::XuBusy;
  return std::max(now, m_input_free);
}

OpTiming TransposeUnit::execute(const DecodedOp& op, int64_t now) {
  charge_reads(op);
  if (op.op == Opcode::XPOP) return pop(op, now);
  if (m_pending + m_fifo.count() >= m_spec.xu_fifo)
    throw UnitFault(
        fmt::format("xpush: the transpose unit holds {} slices (its FIFO depth); pop results first",
                    m_spec.xu_fifo));
  const int S = m_spec.sublanes;
  const int64_t start = std::max(now, m_input_free);
  m_input_free = start + S;
  m_events.ext_elements += words();
  push_slice(m_state.vreg(op.a), start + S - 1 + m_spec.latency_of(isa::LatencyClass::Transpose));
  return OpTiming{start, S, start};
}

void TransposeUnit::push_slice(const uint32_t* slice, int64_t ready) {
  const int S = m_spec.sublanes, L = m_spec.lanes;
  for (int s = 0; s < S; ++s) {
    const int row = m_pending * S + s;
    if (row < L)
      std::memcpy(&m_matrix[static_cast<size_t>(row) * L], slice + s * L,
                  static_cast<size_t>(L) * 4);
  }
  if (++m_pending < m_slices) return;
  m_pending = 0;
  for (int j = 0; j < m_slices; ++j) {
    uint32_t* out = m_fifo.push(ready);
    // Slice j holds rows j*S .. j*S+S-1 of M^T (columns of M); rows past L are zero. Each row
    // l of M contributes its words [j*S, j*S + rows) to column l of the slice.
    const int rows = std::min(S, L - j * S);
    std::fill(out + static_cast<size_t>(rows) * L, out + static_cast<size_t>(S) * L, 0u);
    for (int l = 0; l < L; ++l) {
      const uint32_t* src = &m_matrix[static_cast<size_t>(l) * L + static_cast<size_t>(j) * S];
      for (int s = 0; s < rows; ++s) out[s * L + l] = src[s];
    }
  }
}

}  // namespace tessera::core
