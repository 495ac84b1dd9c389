#include "system/bsp.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"

namespace tessera::system {

SyncGroups::SyncGroups(int processors, int group_size)
    : m_group_size(group_size <= 0 ? processors : group_size) {
  if (processors < 1)
    throw Error("system", fmt::format("{} processors: need at least 1", processors));
  if (group_size < 0 || processors % m_group_size != 0)
    throw Error("system.sync_group_size",
                fmt::format("{} does not divide the {} processors into equal groups", group_size,
                            processors));
  for (int p = 0; p < processors; p += m_group_size) {
    m_first.push_back(p);
    m_size.push_back(m_group_size);
  }
}

int SyncGroups::group_of(int p) const {
  return p / m_group_size;
}

std::string processor_name(int p, int cores_per_chip) {
  return fmt::format("processor {} (chip {}, core {})", p, p / cores_per_chip, p % cores_per_chip);
}

void check_group_target(const SyncGroups& groups, int g, int src, uint32_t dst, int64_t superstep) {
  if (dst >= static_cast<uint32_t>(groups.first(g)) &&
      dst < static_cast<uint32_t>(groups.first(g) + groups.size(g)))
    return;
  throw Error(fmt::format("processor {}, superstep {}", src, superstep),
              fmt::format("xsend to processor {} outside its sync group (processors {}..{})", dst,
                          groups.first(g), groups.first(g) + groups.size(g) - 1));
}

void sort_for_delivery(std::vector<Send>& sends) {
  std::stable_sort(sends.begin(), sends.end(), [](const Send& a, const Send& b) {
    if (a.send.dst_proc != b.send.dst_proc) return a.send.dst_proc < b.send.dst_proc;
    if (a.src != b.src) return a.src < b.src;
    return a.seq < b.seq;
  });
}

void fault_barrier_mismatch(int superstep, const std::vector<int>& halted,
                            const std::vector<int>& waiting) {
  throw Error(
      fmt::format("superstep {}", superstep),
      fmt::format(
          "processors {} halted while processors {} wait at the barrier (every processor of a "
          "sync group must execute the same number of syncs)",
          fmt::join(halted, ","), fmt::join(waiting, ",")));
}

std::vector<int> waiting_processors(const SyncGroups& groups, int g, int64_t superstep,
                                    const std::vector<char>& halted) {
  std::vector<int> halts, waits;
  for (int i = 0; i < groups.size(g); ++i)
    (halted[static_cast<size_t>(i)] ? halts : waits).push_back(groups.first(g) + i);
  if (!halts.empty() && !waits.empty())
    fault_barrier_mismatch(static_cast<int>(superstep), halts, waits);
  return waits;
}

}  // namespace tessera::system
