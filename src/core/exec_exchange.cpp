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
  return op == Opcode::SYNC || op == Opcode::XSYNC || op == Opcode::XWAIT || op == Opcode::XSEND ||
         op == Opcode::XSENDADD || op == Opcode::XSENDMAX;
}

void apply_receive(ArchState& s, uint32_t addr, XCombine combine, const uint32_t* words, size_t n) {
  if (n == 0) return;
  uint32_t* d = s.vmem.data() + addr;
  switch (combine) {
    case XCombine::Store:
      std::copy(words, words + n, d);
      break;
    case XCombine::Add:
      for (size_t i = 0; i < n; ++i)
        d[i] = std::bit_cast<uint32_t>(std::bit_cast<float>(d[i]) + std::bit_cast<float>(words[i]));
      break;
    case XCombine::Max:
      for (size_t i = 0; i < n; ++i)
        d[i] = std::bit_cast<uint32_t>(
            numerics::fmax_ieee(std::bit_cast<float>(d[i]), std::bit_cast<float>(words[i])));
      break;
  }
}

void HeldReceives::hold(uint32_t addr, XCombine combine, const uint32_t* words, size_t n) {
  m_held.push_back(HeldReceive{addr, combine, std::vector<uint32_t>(words, words + n)});
}

void HeldReceives::check(int64_t first, int64_t count, std::string_view what) const {
  for (const HeldReceive& h : m_held)
    if (first < int64_t{h.addr} + static_cast<int64_t>(h.words.size()) &&
        int64_t{h.addr} < first + count)
      throw UnitFault(fmt::format(
          "{}: vector memory words [{}, {}) overlap words [{}, {}) that the pending xsync "
          "exchange is still receiving (touch them after xwait)",
          what, first, first + count, h.addr,
          int64_t{h.addr} + static_cast<int64_t>(h.words.size())));
}

void HeldReceives::apply(ArchState& s) {
  for (const HeldReceive& h : m_held)
    apply_receive(s, h.addr, h.combine, h.words.data(), h.words.size());
  m_held.clear();
}

void Machine::receive(uint32_t addr, XCombine combine, const uint32_t* words, size_t n) {
  if (!m_exchange_pending) {
    apply_receive(m_state, addr, combine, words, n);
    return;
  }
  m_held.hold(addr, combine, words, n);
}

void Machine::deliver_to_self() {
  for (const OutboundSend& o : m_outbox)
    receive(o.dst_addr, o.combine, o.words.data(), o.words.size());
  m_outbox.clear();
}

void Machine::complete_exchange() {
  if (!m_exchange_pending) return;
  m_exchange_pending = false;
  m_held.apply(m_state);
}

OpTiming Machine::exec_exchange(const DecodedOp& op, int64_t now, Control& ctl) {
  if (op.op == Opcode::SYNC || op.op == Opcode::XSYNC || op.op == Opcode::XWAIT) {
    if (op.op == Opcode::XWAIT && !m_exchange_pending)
      throw UnitFault(
          "xwait: no xsync exchange is pending (none since the last wait), so nothing can complete "
          "it");
    complete_exchange();  // ready() has held the bundle until the exchange was done
    if (op.op == Opcode::XWAIT) return fixed(op, now);
    ctl.sync = true;
    if (op.op == Opcode::XSYNC) {
      m_exchange_pending = true;
      m_exchange_done = now + 1;
    }
    return fixed(op, now);
  }
  const std::string_view name = isa::op_info(op.op).mnemonic;
  const uint32_t dst = m_state.sreg(op.d), src = m_state.sreg(op.a), n = m_state.sreg(op.b);
  const uint32_t proc = m_state.sreg(op.c);
  if (proc >= m_exchange_procs)
    throw UnitFault(fmt::format("{}: processor {} does not exist (processors 0..{})", name, proc,
                                m_exchange_procs - 1));
  const auto size = static_cast<uint64_t>(m_state.vmem.size());
  for (const auto& [what, at] : {std::pair{"source", src}, std::pair{"destination", dst}})
    if (uint64_t{at} + n > size)
      throw UnitFault(fmt::format("{}: {} vector memory words [{}, {}) outside [0, {})", name, what,
                                  at, uint64_t{at} + n, size));
  if (n > 0 && !m_held.empty()) m_held.check(src, n, name);
  if (n > 0) {
    OutboundSend o;
    o.dst_proc = proc;
    o.dst_addr = dst;
    o.combine = op.op == Opcode::XSEND      ? XCombine::Store
                : op.op == Opcode::XSENDADD ? XCombine::Add
                                            : XCombine::Max;
    o.count = n;
    if (!m_exchange_timing_only)
      o.words.assign(m_state.vmem.data() + src, m_state.vmem.data() + src + n);
    m_outbox.push_back(std::move(o));
    m_ev.vmem_read_bytes += int64_t{n} * 4;
  }
  return fixed(op, now);
}

}  // namespace tessera::core
