#include "core/dma.h"

#include <algorithm>
#include <cmath>

namespace tessera::core {

void dma_transfer(const DmaRequest& r, ArchState& s) {
  for (int64_t i = 0; i < r.count; ++i) {
    const int64_t src = r.src + i * r.src_stride, dst = r.dst + i * r.dst_stride;
    switch (r.dir) {
      case DmaDir::HbmToVmem:
        s.hbm.read_block(src, s.vmem.data() + dst, r.chunk);
        break;
      case DmaDir::HbmToSmem:
        s.hbm.read_block(src, s.smem.data() + dst, r.chunk);
        break;
      case DmaDir::VmemToHbm:
        s.hbm.write_block(dst, s.vmem.data() + src, r.chunk);
        break;
      case DmaDir::SmemToHbm:
        s.hbm.write_block(dst, s.smem.data() + src, r.chunk);
        break;
    }
  }
  if (r.flag >= 0) s.flags[static_cast<size_t>(r.flag)] += 1;
}

DmaEngine::DmaEngine(const CoreSpec& spec)
    : m_latency(spec.dma_latency),
      m_bytes_per_cycle(spec.hbm_bytes_per_cycle),
      m_ring(static_cast<size_t>(spec.dma_queue)) {}

int64_t DmaEngine::queue_ready(int64_t now) const {
  const int q = static_cast<int>(m_ring.size());
  if (m_count < q) return now;
  return std::max(now, at(m_count - q).done);
}

int64_t DmaEngine::enqueue(DmaRequest r, int64_t now) {
  const double start = std::max(static_cast<double>(now + m_latency), m_data_free);
  const double cycles = static_cast<double>(r.path_bytes()) / m_bytes_per_cycle;
  const double end = m_reserved.empty() ? start + cycles : stream_end(start, cycles);
  m_data_free = end;
  r.issue = now;
  r.done = std::max(now + 1, static_cast<int64_t>(std::ceil(end)));
  m_ring[static_cast<size_t>((m_head + m_count) % m_ring.size())] = r;
  ++m_count;
  return r.done;
}

void DmaEngine::reserve(int64_t from, int64_t to) {
  if (to <= from) return;
  auto [it, fresh] = m_reserved.emplace(from, to);
  if (!fresh) it->second = std::max(it->second, to);
}

// The data of `cycles` path cycles from `start` on, skipping reserved intervals; forgets the
// reservations that end before `start` (data starts never move backwards).
double DmaEngine::stream_end(double start, double cycles) {
  while (!m_reserved.empty() && static_cast<double>(m_reserved.begin()->second) <= start)
    m_reserved.erase(m_reserved.begin());
  double t = start, left = cycles;
  for (auto it = m_reserved.begin(); left > 0;) {
    if (it == m_reserved.end()) return t + left;
    const auto s = static_cast<double>(it->first), e = static_cast<double>(it->second);
    if (e <= t) {
      ++it;
    } else if (s <= t) {
      t = e, ++it;
    } else if (left <= s - t) {
      return t + left;
    } else {
      left -= s - t, t = e, ++it;
    }
  }
  return t;
}

void DmaEngine::retire(int64_t now, ArchState& s) {
  while (m_count > 0 && at(0).done <= now) {
    dma_transfer(at(0), s);
    m_head = (m_head + 1) % static_cast<int>(m_ring.size());
    --m_count;
  }
}

int64_t DmaEngine::retire_all(ArchState& s) {
  int64_t last = -1;
  while (m_count > 0) {
    last = at(0).done;
    retire(last, s);
  }
  return last;
}

int64_t DmaEngine::flag_ready(int flag, int64_t value, int64_t need) const {
  for (int i = 0; i < m_count && value < need; ++i) {
    if (at(i).flag != flag) continue;
    if (++value >= need) return at(i).done;
  }
  return value >= need ? 0 : -1;
}

}  // namespace tessera::core
