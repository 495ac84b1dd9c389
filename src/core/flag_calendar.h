// FlagCalendar: sync-flag increments owed at future cycles (a unit's work that completes later
// than it was computed). retire() applies those due; flag_ready() tells a waiter when a flag will
// reach a value.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace tessera::core {

class FlagCalendar {
 public:
  // Flag `flag` is incremented by one at cycle `at`.
  void add(int flag, int64_t at) { m_pending.emplace_back(at, flag); }
  // Increments `flags` by every increment due at or before `now` and forgets them.
  void retire(int64_t now, std::vector<uint32_t>& flags);
  // For a flag short of `need` (value < need): the cycle the pending increments bring `flag` from
  // `value` to `need` (earliest first), or -1 if they do not.
  int64_t flag_ready(int flag, int64_t value, int64_t need) const;
  // The cycle of the last pending increment, or -1.
  int64_t last() const;
  bool empty() const { return m_pending.empty(); }

 private:
  std::vector<std::pair<int64_t, int>> m_pending;  // (cycle, flag)
};

}  // namespace tessera::core
