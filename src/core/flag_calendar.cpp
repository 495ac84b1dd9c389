#include "core/flag_calendar.h"

#include <algorithm>

namespace tessera::core {

void FlagCalendar::retire(int64_t now, std::vector<uint32_t>& flags) {
  for (size_t i = 0; i < m_pending.size();) {
    if (m_pending[i].first <= now) {
      flags[static_cast<size_t>(m_pending[i].second)] += 1;
      m_pending.erase(m_pending.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

int64_t FlagCalendar::flag_ready(int flag, int64_t value, int64_t need) const {
  std::vector<int64_t> at;
  for (const auto& [done, f] : m_pending)
    if (f == flag) at.push_back(done);
  std::sort(at.begin(), at.end());
  for (int64_t d : at)
    if (++value >= need) return d;
  return -1;
}

int64_t FlagCalendar::last() const {
  int64_t last = -1;
  for (const auto& p : m_pending) last = std::max(last, p.first);
  return last;
}

}  // namespace tessera::core
