// The functional BSP system: N functional cores (the ISA's definition) running one program image
// (each processor's copy patched with its index, S1130) or one program per processor; sends are
// delivered at each sync in the order of core/exchange.h. No timing: the definition the timed
// system (system.h) must match value for value.
#pragma once

#include <memory>
#include <vector>

#include "core/functional.h"
#include "isa/image.h"
#include "system/bsp.h"

namespace tessera::system {

struct BspLayout {
  int processors = 1;  // chips * cores_per_chip; processor p = chip p / cores_per_chip
  int cores_per_chip = 1;
  int sync_group_size = 0;  // 0: one group of all processors
};

class FunctionalSystem {
 public:
  // One image: processor p runs image.with_index(p).
  FunctionalSystem(const core::CoreSpec& spec, BspLayout layout, const isa::Program& image,
                   core::RunOptions options = {});
  // One program per processor (their index words are used as they are).
  FunctionalSystem(const core::CoreSpec& spec, BspLayout layout,
                   const std::vector<isa::Program>& programs, core::RunOptions options = {});

  // Runs every group until all its processors halt. Throws Error naming the processor on a fault.
  void run();
  int processors() const { return static_cast<int>(m_cores.size()); }
  core::FunctionalCore& core(int p) { return *m_cores.at(static_cast<size_t>(p)); }
  int64_t supersteps(int group = 0) const { return m_supersteps.at(static_cast<size_t>(group)); }

 private:
  void exchange(int g, int64_t step);
  BspLayout m_layout;
  SyncGroups m_groups;
  std::vector<std::unique_ptr<core::FunctionalCore>> m_cores;
  std::vector<int64_t> m_supersteps;
};

// Sets %nproc and the exchange's processor count of a core's machine (both interpreters).
void join_system(core::Machine& m, int processors);

}  // namespace tessera::system
