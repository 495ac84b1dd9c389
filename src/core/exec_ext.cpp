// Extended units: transpose (XU), reduce/permute (RPU), EUP, RNG. Timing rules are in machine.h.
//
// Reduce/permute semantics (S sublanes, L lanes, rows reduced with numerics/reduce.h's tree):
//   rrot vA, sB      r[s][l] = vA[s][(l - sB) mod L]
//   rperm vA, vB     r[s][l] = vA[s][vB[s][l] mod L]
//   rsum / rmax vA   r[s][l] = tree_sum / tree_max of row s
//   rsegsum vA, imm  r[s][l] = tree_sum of row s over the segment of imm lanes holding l
//                    (imm a power of two in 1..L, else the op faults)
//   rsum.perm vA,vB  with t[s] = tree_sum of row s: r[s][l] = t[vB[s][l] mod S] (the chained
//                    permute routes the per-sublane sums anywhere, e.g. into one row)
// Transpose: slices j = 0..ceil(L/S)-1 of an L x L matrix M (rows j*S .. j*S+S-1, rows >= L of a
// partial last slice ignored); the slice completing M makes ceil(L/S) output slices of M^T, slice
// j holding rows j*S + s of M^T (zero rows beyond L).
#include <algorithm>
#include <bit>
#include <cstring>

#include <fmt/format.h>

#include "core/fault.h"
#include "core/machine.h"
#include "numerics/eup.h"
#include "numerics/reduce.h"

namespace tessera::core {

using isa::Opcode;

namespace {

bool is_rpu_push(Opcode op) {
  return op == Opcode::RROT || op == Opcode::RPERM || op == Opcode::RSUM || op == Opcode::RMAX ||
         op == Opcode::RSEGSUM || op == Opcode::RSUMPERM;
}

bool is_eup_push(Opcode op) {
  return op == Opcode::EEXP || op == Opcode::ELOG || op == Opcode::ERCP || op == Opcode::ERSQRT ||
         op == Opcode::ESQRT || op == Opcode::ETANH;
}

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

// Earliest push cycle for a pipelined FIFO unit, without faulting.
int64_t push_ready(const ResultFifo& fifo, int64_t input_free, int64_t now, StallCause busy,
                   StallCause& cause) {
  int64_t t = std::max(now, input_free);
  cause = busy;
  if (!fifo.full() && fifo.slot_free_at() > t)
    t = fifo.slot_free_at(), cause = StallCause::FifoFull;
  return t;
}

}  // namespace

int64_t Machine::ext_ready(const DecodedOp& op, int64_t now, StallCause& cause) const {
  if (is_eup_push(op.op)) return push_ready(m_eup, m_eup_free, now, StallCause::EupBusy, cause);
  if (is_rpu_push(op.op)) return push_ready(m_rpu, m_rpu_free, now, StallCause::RpuBusy, cause);
  switch (op.op) {
    case Opcode::XPUSH:
      cause = StallCause::XuBusy;
      return std::max(now, m_xu_free);
    case Opcode::XPOP:
      cause = StallCause::XuResult;
      return m_xu.empty() ? now : m_xu.front_ready();
    case Opcode::RPOP:
      cause = StallCause::RpuResult;
      return m_rpu.empty() ? now : m_rpu.front_ready();
    case Opcode::EPOP:
      cause = StallCause::EupResult;
      return m_eup.empty() ? now : m_eup.front_ready();
    case Opcode::RNG:
    case Opcode::RNGSEED:
      cause = StallCause::RngBusy;
      return std::max(now, m_rng_free);
    default:
      return now;
  }
}

OpTiming Machine::push_result(ResultFifo& fifo, int64_t& input_free, isa::LatencyClass lat,
                              int64_t now, const uint32_t* words) {
  const int64_t start = std::max({now, input_free, fifo.slot_free_at()});
  const int S = m_spec.sublanes;
  input_free = start + S;
  std::memcpy(fifo.push(start + S - 1 + m_spec.latency_of(lat)), words,
              static_cast<size_t>(m_words) * 4);
  m_ev.ext_elements += m_words;
  return OpTiming{start, S, start};
}

OpTiming Machine::pop_result(ResultFifo& fifo, const DecodedOp& op, int64_t now) {
  const int64_t start = std::max(now, fifo.front_ready());
  std::memcpy(m_state.vreg(op.d), fifo.pop(start), static_cast<size_t>(m_words) * 4);
  m_ev.vreg_elements += m_words;
  return OpTiming{start, 1, start + 1};
}

void Machine::rpu_compute(const DecodedOp& op, uint32_t* out) {
  const int S = m_spec.sublanes, L = m_spec.lanes;
  const uint32_t* a = m_state.vreg(op.a);
  const uint32_t* idx = m_state.vreg(op.b);
  const float* fa = m_fbuf.data();
  std::memcpy(m_fbuf.data(), a, static_cast<size_t>(m_words) * 4);
  const uint32_t lane_mask = static_cast<uint32_t>(L - 1);
  switch (op.op) {
    case Opcode::RROT: {
      const uint32_t rot = m_state.sreg(op.b) & lane_mask;
      for (int s = 0; s < S; ++s)
        for (int l = 0; l < L; ++l)
          out[s * L + l] = a[s * L + ((static_cast<uint32_t>(l) - rot) & lane_mask)];
      break;
    }
    case Opcode::RPERM:
      for (int s = 0; s < S; ++s)
        for (int l = 0; l < L; ++l) out[s * L + l] = a[s * L + (idx[s * L + l] & lane_mask)];
      break;
    case Opcode::RSUM:
    case Opcode::RMAX:
      for (int s = 0; s < S; ++s) {
        const float r = op.op == Opcode::RSUM ? numerics::tree_sum(fa + s * L, L)
                                              : numerics::tree_max(fa + s * L, L);
        std::fill(out + s * L, out + (s + 1) * L, std::bit_cast<uint32_t>(r));
      }
      break;
    case Opcode::RSEGSUM: {
      const int seg = op.imm;
      if (seg < 1 || seg > L || !std::has_single_bit(static_cast<unsigned>(seg)))
        throw UnitFault(
            fmt::format("rsegsum: segment width {} is not a power of two in 1..{}", seg, L));
      for (int s = 0; s < S; ++s)
        for (int l0 = 0; l0 < L; l0 += seg) {
          const float r = numerics::tree_sum(fa + s * L + l0, seg);
          std::fill(out + s * L + l0, out + s * L + l0 + seg, std::bit_cast<uint32_t>(r));
        }
      break;
    }
    case Opcode::RSUMPERM: {
      uint32_t sums[64];
      for (int s = 0; s < S; ++s)
        sums[s] = std::bit_cast<uint32_t>(numerics::tree_sum(fa + s * L, L));
      for (int i = 0; i < m_words; ++i) out[i] = sums[idx[i] % static_cast<uint32_t>(S)];
      break;
    }
    default:
      break;
  }
}

void Machine::xu_push(const uint32_t* slice, int64_t ready) {
  const int S = m_spec.sublanes, L = m_spec.lanes;
  for (int s = 0; s < S; ++s) {
    const int row = m_xu_pending * S + s;
    if (row < L)
      std::memcpy(&m_xu_matrix[static_cast<size_t>(row) * L], slice + s * L,
                  static_cast<size_t>(L) * 4);
  }
  if (++m_xu_pending < m_xu_slices) return;
  m_xu_pending = 0;
  for (int j = 0; j < m_xu_slices; ++j) {
    uint32_t* out = m_xu.push(ready);
    // Slice j holds rows j*S .. j*S+S-1 of M^T (columns of M); rows past L are zero. Each row
    // l of M contributes its words [j*S, j*S + rows) to column l of the slice.
    const int rows = std::min(S, L - j * S);
    std::fill(out + static_cast<size_t>(rows) * L, out + static_cast<size_t>(S) * L, 0u);
    for (int l = 0; l < L; ++l) {
      const uint32_t* src = &m_xu_matrix[static_cast<size_t>(l) * L + static_cast<size_t>(j) * S];
      for (int s = 0; s < rows; ++s) out[s * L + l] = src[s];
    }
  }
}

OpTiming Machine::exec_ext(const DecodedOp& op, int64_t now) {
  ArchState& s = m_state;
  const int S = m_spec.sublanes;
  m_ev.vreg_elements += static_cast<int64_t>(op.vreg_reads) * m_words;
  if (is_eup_push(op.op)) {
    std::memcpy(m_fbuf.data(), s.vreg(op.a), static_cast<size_t>(m_words) * 4);
    numerics::eup_apply(eup_func(op.op), m_fbuf.data(), m_fbuf.data(), m_words);
    // push_result copies the words (memcpy), so the fp32 buffer is passed as they are.
    return push_result(m_eup, m_eup_free, isa::LatencyClass::Eup, now,
                       reinterpret_cast<const uint32_t*>(m_fbuf.data()));
  }
  if (is_rpu_push(op.op)) {
    rpu_compute(op, m_tmp.data());
    return push_result(m_rpu, m_rpu_free, isa::LatencyClass::Reduce, now, m_tmp.data());
  }
  switch (op.op) {
    case Opcode::XPUSH: {
      if (m_xu_pending + m_xu.count() >= m_spec.xu_fifo)
        throw UnitFault(fmt::format(
            "xpush: the transpose unit holds {} slices (its FIFO depth); pop results first",
            m_spec.xu_fifo));
      const int64_t start = std::max(now, m_xu_free);
      m_xu_free = start + S;
      m_ev.ext_elements += m_words;
      xu_push(s.vreg(op.a), start + S - 1 + m_spec.latency_of(isa::LatencyClass::Transpose));
      return OpTiming{start, S, start};
    }
    case Opcode::XPOP:
      return pop_result(m_xu, op, now);
    case Opcode::RPOP:
      return pop_result(m_rpu, op, now);
    case Opcode::EPOP:
      return pop_result(m_eup, op, now);
    case Opcode::RNG: {
      const int64_t start = std::max(now, m_rng_free);
      m_rng_free = start + m_rng_cycles;
      s.rng.generate(s.vreg(op.d), m_words);
      m_ev.ext_elements += m_words;
      m_ev.vreg_elements += m_words;
      return OpTiming{start, m_rng_cycles,
                      start + m_rng_cycles - 1 + m_spec.latency_of(isa::LatencyClass::Rng)};
    }
    case Opcode::RNGSEED: {
      const int64_t start = std::max(now, m_rng_free);
      m_rng_free = start + 1;
      s.rng.seed = s.sreg(op.a);
      s.rng.position = 0;
      return OpTiming{start, 1, start};
    }
    default:
      break;
  }
  return fixed(op, now);
}

}  // namespace tessera::core
