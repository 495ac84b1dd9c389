#include "core/units/dma_unit.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/fault.h"

namespace tessera::core {

using isa::Opcode;

namespace {

void check_range(std::string_view what, std::string_view mem, int64_t addr, int64_t n,
                 int64_t size) {
  if (addr < 0 || addr + n > size)
    throw UnitFault(
        fmt::format("{}: {} words [{}, {}) outside [0, {})", what, mem, addr, addr + n, size));
}

}  // namespace

DmaUnit::DmaUnit(const UnitEnv& env)
    : CoreUnit(env),
      m_engine(env.spec),
      m_encoder(env.spec.hbm_encoding),
      m_adam(env, m_engine, m_encoder),
      m_sparse(env.sparse) {}

int64_t DmaUnit::ready(const DecodedOp& op, int64_t now, StallCause& cause) const {
  if (op.op == Opcode::ADAMSTART) return m_adam.ready(op, now, cause);
  cause = StallCause::DmaQueue;
  return m_engine.queue_ready(now);
}

DmaRequest DmaUnit::request(const DecodedOp& op) {
  const ArchState& s = m_state;
  const std::string_view name = isa::op_info(op.op).mnemonic;
  DmaRequest r;
  r.flag = op.op == Opcode::DMAVHSC ? -1 : op.c;  // dma.vh.sc: the sparse core's flag (execute)
  const bool two_d = op.op == Opcode::DMAHV2 || op.op == Opcode::DMAVH2;
  r.dst = s.sreg(op.d);
  r.src = s.sreg(op.a);
  if (two_d) {
    const int64_t at = s.sreg(op.b);
    check_range(name, "descriptor in scalar memory", at, 4, s.smem.size());
    r.count = s.smem[at];
    r.chunk = s.smem[at + 1];
    r.src_stride = static_cast<int32_t>(s.smem[at + 2]);
    r.dst_stride = static_cast<int32_t>(s.smem[at + 3]);
    m_events.smem_read_bytes += 16;
  } else {
    r.count = 1;
    r.chunk = s.sreg(op.b);
  }
  int64_t src_size = 0, dst_size = 0, onchip = 0;
  std::string_view src_mem, dst_mem;
  switch (op.op) {
    case Opcode::DMAHV:
    case Opcode::DMAHV2:
      r.dir = DmaDir::HbmToVmem, src_mem = "HBM", dst_mem = "vector memory";
      src_size = s.hbm.size(), dst_size = onchip = s.vmem.size();
      break;
    case Opcode::DMAVH:
    case Opcode::DMAVH2:
    case Opcode::DMAVHSC:
      r.dir = DmaDir::VmemToHbm, src_mem = "vector memory", dst_mem = "HBM";
      src_size = onchip = s.vmem.size(), dst_size = s.hbm.size();
      break;
    case Opcode::DMAHS:
      r.dir = DmaDir::HbmToSmem, src_mem = "HBM", dst_mem = "scalar memory";
      src_size = s.hbm.size(), dst_size = onchip = s.smem.size();
      break;
    case Opcode::DMASH:
      r.dir = DmaDir::SmemToHbm, src_mem = "scalar memory", dst_mem = "HBM";
      src_size = onchip = s.smem.size(), dst_size = s.hbm.size();
      break;
    default:
      throw UnitFault(fmt::format("{}: not implemented by this core", name));
  }
  if (r.chunk > 0 && r.count > onchip / r.chunk)
    throw UnitFault(fmt::format("{}: {} x {} words exceed the {} words of on-chip memory", name,
                                r.count, r.chunk, onchip));
  if (r.words() > 0) {
    const int64_t last = r.count - 1;
    check_range(name, src_mem, r.src, r.chunk, src_size);
    check_range(name, src_mem, r.src + last * r.src_stride, r.chunk, src_size);
    check_range(name, dst_mem, r.dst, r.chunk, dst_size);
    check_range(name, dst_mem, r.dst + last * r.dst_stride, r.chunk, dst_size);
    if (!m_held.empty() && (r.dir == DmaDir::HbmToVmem || r.dir == DmaDir::VmemToHbm)) {
      const int64_t at = r.dir == DmaDir::HbmToVmem ? r.dst : r.src;
      const int64_t stride = r.dir == DmaDir::HbmToVmem ? r.dst_stride : r.src_stride;
      const int64_t lo = std::min(at, at + last * stride),
                    hi = std::max(at, at + last * stride) + r.chunk;
      m_held.check(lo, hi - lo, name);  // the whole span, strides included
    }
  }
  return r;
}

OpTiming DmaUnit::execute(const DecodedOp& op, int64_t now) {
  if (op.op == Opcode::ADAMSTART) return m_adam.execute(op, now);
  ArchState& s = m_state;
  DmaRequest r = request(op);
  const int64_t bytes = r.words() * 4;
  r.hbm_bytes = m_encoder.charge(r, s, s.pc);
  ++m_events.dma_requests;
  m_events.dma_bytes += bytes;
  const bool to_hbm = r.dir == DmaDir::VmemToHbm || r.dir == DmaDir::SmemToHbm;
  (to_hbm ? m_events.hbm_write_bytes : m_events.hbm_read_bytes) += r.hbm_bytes;
  if (r.dir == DmaDir::HbmToVmem) m_events.vmem_write_bytes += bytes;
  if (r.dir == DmaDir::VmemToHbm) m_events.vmem_read_bytes += bytes;
  if (r.dir == DmaDir::HbmToSmem) m_events.smem_write_bytes += bytes;
  if (r.dir == DmaDir::SmemToHbm) m_events.smem_read_bytes += bytes;
  if (!m_timed) {
    dma_transfer(r, s);
    if (op.op == Opcode::DMAVHSC) m_sparse.signal(op.c, now);
    return OpTiming{now, 1, now};
  }
  const int64_t start = m_engine.queue_ready(now);
  const int64_t done = m_engine.enqueue(r, start);
  if (op.op == Opcode::DMAVHSC) m_sparse.signal(op.c, done);
  return OpTiming{start, static_cast<int32_t>(std::min<int64_t>(done - start, 1 << 30)), start};
}

void DmaUnit::retire(int64_t now) {
  m_engine.retire(now, m_state);
  m_adam.retire(now);
}

int64_t DmaUnit::flag_ready(int flag, int64_t value, int64_t want) const {
  const int64_t at = m_engine.flag_ready(flag, value, want);
  return at >= 0 ? at : m_adam.flag_ready(flag, value, want);
}

int64_t DmaUnit::drain() {
  return m_engine.retire_all(m_state);
}

}  // namespace tessera::core
