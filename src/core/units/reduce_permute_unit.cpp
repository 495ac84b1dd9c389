#include "core/units/reduce_permute_unit.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include <fmt/format.h>

#include "core/fault.h"
#include "numerics/reduce.h"

namespace tessera::core {

using isa::Opcode;

ReducePermuteUnit::ReducePermuteUnit(const UnitEnv& env)
    : FifoUnit(env, {"reduce/permute", env.spec.rpu_fifo, StallCause::RpuBusy,
                     StallCause::RpuResult, isa::LatencyClass::Reduce}),
      m_in(static_cast<size_t>(words()), 0.0f),
      m_out(static_cast<size_t>(words()), 0u) {}

void ReducePermuteUnit::read_spec(ConfigReader& r, CoreSpec& s) {
  s.rpu_fifo = static_cast<int>(
      r.get_int("core.rpu.fifo", 4, {1, 1024}, "vregs", "reduce/permute result FIFO depth"));
}

int64_t ReducePermuteUnit::ready(const DecodedOp& op, int64_t now, StallCause& cause) const {
  return op.op == Opcode::RPOP ? pop_ready(now, cause) : push_ready(now, cause);
}

OpTiming ReducePermuteUnit::execute(const DecodedOp& op, int64_t now) {
  charge_reads(op);
  if (op.op == Opcode::RPOP) return pop(op, now);
  compute(op, m_out.data());
  return push(now, m_out.data());
}

void ReducePermuteUnit::compute(const DecodedOp& op, uint32_t* out) {
  const int S = m_spec.sublanes, L = m_spec.lanes, n = words();
  const uint32_t* a = m_state.vreg(op.a);
  const uint32_t* idx = m_state.vreg(op.b);
  const float* fa = m_in.data();
  std::memcpy(m_in.data(), a, static_cast<size_t>(n) * 4);
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
      for (int i = 0; i < n; ++i) out[i] = sums[idx[i] % static_cast<uint32_t>(S)];
      break;
    }
    default:
      break;
  }
}

}  // namespace tessera::core
