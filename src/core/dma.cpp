#include "core/dma.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace tessera::core {

namespace {

// The rows of a request, `count` rows of `chunk` words, HBM rows `hbm_stride` words apart from
// `hbm_addr` and local rows `local_stride` apart from `local`. Most requests are many short rows
// (a strided gather moves one word a row), so rows are copied straight to or from the HBM pages:
// all at once when every row lies on one page, else row by row with the page looked up once per
// run of rows on it; a row that crosses a page boundary goes through read_block / write_block.
struct Rows {
  int64_t hbm_addr, hbm_stride, local_stride, count, chunk;
  // The page every row lies on, or -1.
  int64_t single_page() const {
    const int64_t last = hbm_addr + (count - 1) * hbm_stride;
    const int64_t lo = std::min(hbm_addr, last), hi = std::max(hbm_addr, last) + chunk - 1;
    const int64_t p = lo / PagedMemory::kPageWords;
    return p == hi / PagedMemory::kPageWords ? p : -1;
  }
};

void copy_words(uint32_t* dst, const uint32_t* src, int64_t n) {
  if (n == 1)
    *dst = *src;
  else
    std::memcpy(dst, src, static_cast<size_t>(n) * 4);
}

// `count` rows of `chunk` words from src (rows src_stride apart) to dst (dst_stride apart).
void copy_rows(uint32_t* dst, int64_t dst_stride, const uint32_t* src, int64_t src_stride,
               int64_t count, int64_t chunk) {
  if (chunk == 1) {
    for (int64_t i = 0; i < count; ++i) dst[i * dst_stride] = src[i * src_stride];
    return;
  }
  for (int64_t i = 0; i < count; ++i) copy_words(dst + i * dst_stride, src + i * src_stride, chunk);
}

// Copies a request's rows from HBM to `local` (kToHbm false) or from `local` to HBM (true). An
// untouched page reads as zeros; writing allocates it. A request of no words touches no page: its
// addresses are not range-checked (DmaUnit checks only requests that move words).
template <bool kToHbm>
void copy_request(std::conditional_t<kToHbm, PagedMemory&, const PagedMemory&> hbm, const Rows& r,
                  std::conditional_t<kToHbm, const uint32_t*, uint32_t*> local) {
  if (r.count <= 0 || r.chunk <= 0) return;
  using PagePtr = std::conditional_t<kToHbm, uint32_t*, const uint32_t*>;
  const auto page_of = [&](int64_t p) -> PagePtr {
    if constexpr (kToHbm)
      return hbm.page_for_write(p);
    else
      return hbm.page_data(p);
  };
  // `count` rows between the page at `at` (rows hbm_stride apart) and `local` (local_stride).
  const auto rows = [&](PagePtr at, auto* loc, int64_t count) {
    if constexpr (kToHbm)
      copy_rows(at, r.hbm_stride, loc, r.local_stride, count, r.chunk);
    else if (at != nullptr)
      copy_rows(loc, r.local_stride, at, r.hbm_stride, count, r.chunk);
    else
      for (int64_t i = 0; i < count; ++i)
        std::memset(loc + i * r.local_stride, 0, static_cast<size_t>(r.chunk) * 4);
  };
  if (const int64_t one = r.single_page(); one >= 0) {
    const PagePtr page = page_of(one);
    rows(page == nullptr ? page : page + (r.hbm_addr - one * PagedMemory::kPageWords), local,
         r.count);
    return;
  }
  int64_t cached = -1;
  PagePtr page = nullptr;
  for (int64_t i = 0; i < r.count; ++i) {
    const int64_t addr = r.hbm_addr + i * r.hbm_stride;
    const int64_t p = addr / PagedMemory::kPageWords, off = addr % PagedMemory::kPageWords;
    const auto loc = local + i * r.local_stride;
    if (off + r.chunk > PagedMemory::kPageWords) {  // across a page boundary
      if constexpr (kToHbm)
        hbm.write_block(addr, loc, r.chunk);
      else
        hbm.read_block(addr, loc, r.chunk);
      continue;
    }
    if (p != cached) page = page_of(p), cached = p;
    rows(page == nullptr ? page : page + off, loc, 1);
  }
}

}  // namespace

void dma_transfer(const DmaRequest& r, ArchState& s) {
  const bool vmem = r.dir == DmaDir::HbmToVmem || r.dir == DmaDir::VmemToHbm;
  ZeroedWords& local = vmem ? s.vmem : s.smem;
  if (r.dir == DmaDir::VmemToHbm || r.dir == DmaDir::SmemToHbm)
    copy_request<true>(s.hbm, {r.dst, r.dst_stride, r.src_stride, r.count, r.chunk},
                       local.data() + r.src);
  else
    copy_request<false>(s.hbm, {r.src, r.src_stride, r.dst_stride, r.count, r.chunk},
                        local.data() + r.dst);
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
