// sync / xsend semantics (exchange.h).
#include <algorithm>
#include <bit>
#include <fmt/format.h>

#include "core/exchange.h"
#include "core/fault.h"
#include "core/machine.h"
#include "numerics/reduce.h"

namespace tessera::core {

using isa::Opcode;

bool is_exchange_op(Opcode op) {
  return op == Opcode::SYNC || op == Opcode::XSEND || op == Opcode::XSENDADD || op == Opcode::XSENDMAX;
}

void apply_receive(ArchState& s, uint32_t addr, XCombine combine, const uint32_t* words, size_t n) {
  if (n == 0) return;
  uint32_t* d = s.vmem.data() + addr;
  switch (combine) {
    case XCombine::Store: std::copy(words, words + n, d); break;
    case XCombine::Add:
      for (size_t i = 0; i < n; ++i)
        d[i] = std::bit_cast<uint32_t>(std::bit_cast<float>(d[i]) + std::bit_cast<float>(words[i]));
      break;
    case XCombine::Max:
      for (size_t i = 0; i < n; ++i)
        d[i] = std::bit_cast<uint32_t>(numerics::fmax_ieee(std::bit_cast<float>(d[i]), std::bit_cast<float>(words[i])));
      break;
  }
}

void deliver_to_self(std::vector<OutboundSend>& outbox, ArchState& s) {
  for (const OutboundSend& o : outbox) apply_receive(s, o.dst_addr, o.combine, o.words.data(), o.words.size());
  outbox.clear();
}

OpTiming Machine::exec_exchange(const DecodedOp& op, int64_t now, Control& ctl) {
  if (op.op == Opcode::SYNC) {
    ctl.sync = true;
    return fixed(op, now);
  }
  const std::string_view name = isa::op_info(op.op).mnemonic;
  const uint32_t dst = m_state.sreg(op.d), src = m_state.sreg(op.a), n = m_state.sreg(op.b);
  const uint32_t proc = m_state.sreg(op.c);
  if (proc >= m_exchange_procs)
    throw UnitFault(fmt::format("{}: processor {} does not exist (processors 0..{})", name, proc, m_exchange_procs - 1));
  const auto size = static_cast<uint64_t>(m_state.vmem.size());
  for (const auto& [what, at] : {std::pair{"source", src}, std::pair{"destination", dst}})
    if (uint64_t{at} + n > size)
      throw UnitFault(fmt::format("{}: {} vector memory words [{}, {}) outside [0, {})", name, what, at,
                                  uint64_t{at} + n, size));
  if (n > 0) {
    OutboundSend o;
    o.dst_proc = proc;
    o.dst_addr = dst;
    o.combine = op.op == Opcode::XSEND ? XCombine::Store : op.op == Opcode::XSENDADD ? XCombine::Add : XCombine::Max;
    o.count = n;
    if (!m_exchange_timing_only) o.words.assign(m_state.vmem.data() + src, m_state.vmem.data() + src + n);
    m_outbox.push_back(std::move(o));
    m_ev.vmem_read_bytes += int64_t{n} * 4;
  }
  return fixed(op, now);
}

}  // namespace tessera::core
