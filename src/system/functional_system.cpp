#include "system/functional_system.h"

#include <fmt/format.h>

namespace tessera::system {

void join_system(core::Machine& m, int processors) {
  m.state().nproc = static_cast<uint32_t>(processors);
  m.set_exchange_processors(static_cast<uint32_t>(processors));
}

FunctionalSystem::FunctionalSystem(const core::CoreSpec& spec, BspLayout layout,
                                   const isa::Program& image, core::RunOptions options)
    : m_layout(layout), m_groups(layout.processors, layout.sync_group_size) {
  for (int p = 0; p < layout.processors; ++p) {
    m_cores.push_back(std::make_unique<core::FunctionalCore>(
        spec, image.with_index(static_cast<uint32_t>(p)), options));
    join_system(m_cores.back()->machine(), layout.processors);
  }
}

FunctionalSystem::FunctionalSystem(const core::CoreSpec& spec, BspLayout layout,
                                   const std::vector<isa::Program>& programs,
                                   core::RunOptions options)
    : m_layout(layout), m_groups(layout.processors, layout.sync_group_size) {
  if (static_cast<int>(programs.size()) != layout.processors)
    throw Error("system",
                fmt::format("{} programs for {} processors", programs.size(), layout.processors));
  for (const isa::Program& program : programs) {
    m_cores.push_back(std::make_unique<core::FunctionalCore>(spec, program, options));
    join_system(m_cores.back()->machine(), layout.processors);
  }
}

void FunctionalSystem::run() {
  m_supersteps.assign(static_cast<size_t>(m_groups.count()), 0);
  for (int g = 0; g < m_groups.count(); ++g) {
    m_supersteps[static_cast<size_t>(g)] = run_group(
        m_groups, g, m_layout.cores_per_chip, [&](int p) { return core(p).run_to_sync(); },
        [&](int64_t step, const std::vector<int>& waiting) {
          exchange(g, step);
          for (int p : waiting) core(p).resume();
        });
  }
}

void FunctionalSystem::exchange(int g, int64_t step) {
  const std::vector<Send> sends = collect_sends(
      m_groups, g, step,
      [&](int p) -> std::vector<core::OutboundSend>& { return core(p).machine().outbox(); });
  for (const Send& s : sends)
    core(static_cast<int>(s.send.dst_proc))
        .machine()
        .receive(s.send.dst_addr, s.send.combine, s.send.words.data(), s.send.words.size());
}

}  // namespace tessera::system
