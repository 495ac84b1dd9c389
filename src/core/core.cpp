#include "core/core.h"

#include <algorithm>

#include "common/error.h"
#include "core/fault.h"

namespace tessera::core {

Core::Core(const CoreSpec& spec, const isa::Program& program, TimedOptions options)
    : Core(spec, program,
           std::make_shared<const DecodedProgram>(decode_program(program.code, spec)),
           program.index, options) {}

Core::Core(const CoreSpec& spec, const isa::Program& program,
           std::shared_ptr<const DecodedProgram> decoded, uint32_t index, TimedOptions options)
    : m_spec(spec),
      m_machine(m_spec, /*timed_dma=*/true, options.units),
      m_program(std::move(decoded)),
      m_options(options),
      m_sready(static_cast<size_t>(m_spec.scalar_regs), 0),
      m_vready(static_cast<size_t>(m_spec.vector_regs), 0),
      m_mready(static_cast<size_t>(m_spec.mask_regs), 0) {
  TESSERA_CHECK(m_program && m_program->code.size() == program.code.size(),
                "decoded program matches the program");
  load_program_data(program, m_machine.state(), m_spec);
  m_machine.state().pid = index;
}

int64_t& Core::reg_ready(isa::RegRef r) {
  switch (r.file) {
    case isa::RegFile::Vector:
      return m_vready[r.index];
    case isa::RegFile::Mask:
      return m_mready[r.index];
    default:
      return m_sready[r.index];
  }
}

void Core::account(const DecodedOp& op, const OpTiming& t, int64_t pc) {
  const int u = static_cast<int>(op.unit);
  const int64_t end = t.start + t.occupancy;
  m_busy[u] += std::max<int64_t>(0, end - std::max(t.start, m_busy_until[u]));
  m_busy_until[u] = std::max(m_busy_until[u], end);
  if (m_options.trace) {
    const isa::Instr& in = m_program->code[static_cast<size_t>(pc)].slot[op.slot];
    m_options.trace->span(isa::to_string(isa::op_info(op.op).unit), isa::op_info(op.op).mnemonic,
                          t.start, t.occupancy, fmt::format("pc {}: {}", pc, op_text(in)));
  }
}

void Core::issue_one() {
  ArchState& s = m_machine.state();
  const int64_t pc = s.pc;
  if (pc < 0 || pc >= static_cast<int64_t>(m_program->bundles.size()))
    fault_fetch(pc, m_next, m_program->bundles.size());
  const isa::Bundle& raw = m_program->code[static_cast<size_t>(pc)];
  if (m_bundles - m_program_first_bundle >= m_options.max_bundles)
    fault_limit(pc, m_next, raw, m_options.max_bundles);
  const DecodedBundle& b = m_program->bundles[static_cast<size_t>(pc)];
  if (b.fault >= 0)
    throw SimFault(pc, m_next, bundle_text(raw), m_program->faults[static_cast<size_t>(b.fault)]);

  const int64_t from = m_next;
  const EventCounts& ev = m_machine.events();
  const int64_t hbm_before = ev.hbm_read_bytes + ev.hbm_write_bytes;
  int64_t t = m_next;
  StallCause cause = StallCause::None;
  if (m_fetch_ready > t) t = m_fetch_ready, cause = StallCause::Branch;
  for (int i = 0; i < b.n_srcs; ++i) {
    const int64_t r = reg_ready(b.srcs[i]);
    if (r > t) t = r, cause = StallCause::Dependency;
  }
  Control ctl;
  try {
    for (int i = 0; i < b.n_ops; ++i) {
      StallCause c = StallCause::None;
      const int64_t r = m_machine.ready(b.ops[i], t, c);
      if (r > t) t = r, cause = c;
    }
    if (t > m_next) {
      m_stalls[static_cast<int>(cause)] += t - m_next;
      if (m_options.trace)
        m_options.trace->span("stall", to_string(cause), m_next, t - m_next,
                              fmt::format("pc {}", pc));
    }
    m_machine.set_cycle(t);
    m_machine.prepare(b);
    for (int i = 0; i < b.n_ops; ++i) {
      const DecodedOp& op = b.ops[i];
      const bool mmul = op.op == isa::Opcode::MMUL || op.op == isa::Opcode::MMULST ||
                        op.op == isa::Opcode::MMULACC || op.op == isa::Opcode::MMULOUT;
      if (m_mxu_attr != nullptr && mmul) m_mxu_attr->before(pc, m_machine.mxu(op.c));
      const OpTiming tm = m_machine.execute(op, t, ctl);
      if (op.has_dest) {
        int64_t& r = reg_ready(op.dest);
        r = std::max(r, tm.dest_ready);
      }
      account(op, tm, pc);
      if (m_mxu_attr != nullptr && mmul) m_mxu_attr->record(pc, m_machine.mxu_stats());
    }
  } catch (const UnitFault& f) {
    throw SimFault(pc, t, bundle_text(raw), f.what());
  }
  if (m_mxu_attr != nullptr)
    m_mxu_attr->record_bundle(pc, t + 1 - from,
                              ev.hbm_read_bytes + ev.hbm_write_bytes - hbm_before);
  ++m_bundles;
  ++m_machine.events().bundles;
  m_last_issue = t;
  m_next = t + 1;
  if (ctl.taken) m_fetch_ready = t + m_spec.latency_of(isa::LatencyClass::Branch);
  s.pc = ctl.taken ? ctl.target : pc + 1;
  if (ctl.halt) s.halted = true;
  if (ctl.sync) m_at_sync = true;
}

void Core::load(const isa::Program& program) {
  load(program, std::make_shared<const DecodedProgram>(decode_program(program.code, m_spec)));
}

void Core::load(const isa::Program& program, std::shared_ptr<const DecodedProgram> decoded) {
  TESSERA_CHECK(decoded && decoded->code.size() == program.code.size(),
                "decoded program matches the program");
  m_program = std::move(decoded);
  ArchState& s = m_machine.state();
  load_program_data(program, s, m_spec);
  s.pc = 0;
  s.halted = false;
  m_program_first_bundle = m_bundles;
  m_next = std::max(m_next, m_cycles);
  m_fetch_ready = std::max(m_fetch_ready, m_cycles);
}

void Core::load(const isa::Program& program, std::shared_ptr<const DecodedProgram> decoded,
                uint32_t index) {
  load(program, std::move(decoded));
  m_machine.state().pid = index;
}

void Core::advance_clock(int64_t cycle) {
  if (cycle < m_cycles)
    throw Error("core",
                fmt::format("cannot move the clock back from cycle {} to {}", m_cycles, cycle));
  m_cycles = cycle;
  m_next = std::max(m_next, cycle);
  m_fetch_ready = std::max(m_fetch_ready, cycle);
  for (auto* ready : {&m_sready, &m_vready, &m_mready})
    for (int64_t& r : *ready) r = std::max(r, cycle);
}

void Core::run() {
  while (run_to_sync()) {
    m_machine.deliver_to_self();
    resume(m_next);
  }
}

bool Core::run_to_sync() {
  ArchState& s = m_machine.state();
  while (!s.halted && !m_at_sync) issue_one();
  if (m_at_sync) return true;
  finish();
  return false;
}

void Core::resume(int64_t cycle) {
  m_at_sync = false;
  if (cycle > m_next) {
    m_stalls[static_cast<int>(StallCause::Exchange)] += cycle - m_next;
    if (m_options.trace)
      m_options.trace->span("stall", to_string(StallCause::Exchange), m_next, cycle - m_next,
                            "barrier");
    m_next = cycle;
  }
}

void Core::finish() {
  int64_t end = m_last_issue + 1;
  end = std::max(end, m_machine.drain());
  for (int64_t r : m_sready) end = std::max(end, r);
  for (int64_t r : m_vready) end = std::max(end, r);
  for (int64_t r : m_mready) end = std::max(end, r);
  m_cycles = end;
}

}  // namespace tessera::core
