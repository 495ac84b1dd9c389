#include "core/functional.h"

#include "core/fault.h"

namespace tessera::core {

FunctionalCore::FunctionalCore(const CoreSpec& spec, const isa::Program& program,
                               RunOptions options)
    : m_spec(spec),
      m_machine(m_spec, /*timed_dma=*/false, options.units),
      m_program(decode_program(program.code, m_spec)),
      m_options(options) {
  load_program_data(program, m_machine.state(), m_spec);
}

bool FunctionalCore::step() {
  ArchState& s = m_machine.state();
  if (s.halted || m_at_sync) return false;
  const int64_t pc = s.pc;
  if (pc < 0 || pc >= static_cast<int64_t>(m_program.bundles.size()))
    fault_fetch(pc, m_bundles, m_program.bundles.size());
  const isa::Bundle& raw = m_program.code[static_cast<size_t>(pc)];
  if (m_bundles >= m_options.max_bundles) fault_limit(pc, m_bundles, raw, m_options.max_bundles);
  const DecodedBundle& b = m_program.bundles[static_cast<size_t>(pc)];
  if (b.fault >= 0)
    throw SimFault(pc, m_bundles, bundle_text(raw), m_program.faults[static_cast<size_t>(b.fault)]);
  Control ctl;
  try {
    m_machine.set_cycle(m_bundles);
    m_machine.prepare(b);
    for (int i = 0; i < b.n_ops; ++i) m_machine.execute(b.ops[i], m_bundles, ctl);
  } catch (const UnitFault& f) {
    throw SimFault(pc, m_bundles, bundle_text(raw), f.what());
  }
  ++m_bundles;
  ++m_machine.events().bundles;
  s.pc = ctl.taken ? ctl.target : pc + 1;
  if (ctl.halt) s.halted = true;
  if (ctl.sync) m_at_sync = true;
  return !s.halted && !m_at_sync;
}

bool FunctionalCore::run_to_sync() {
  while (step()) {
  }
  return m_at_sync;
}

void FunctionalCore::run() {
  while (run_to_sync()) {
    m_machine.deliver_to_self();
    resume();
  }
}

}  // namespace tessera::core
