#include "core/page_slabs.h"

#include <algorithm>
#include <utility>

namespace tessera::core {

PageSlabs::PageSlabs(int64_t page_bytes)
    // Under AddressSanitizer every page is followed by a poisoned gap of one page, so that an
    // access running off a page's end is reported instead of landing in the next page.
    : m_page_bytes(page_bytes),
      m_stride_bytes(page_bytes * (address_sanitizer_enabled() ? 2 : 1)) {}

PageSlabs::PageSlabs(PageSlabs&& other) noexcept
    : m_page_bytes(other.m_page_bytes),
      m_stride_bytes(other.m_stride_bytes),
      m_mappings(std::move(other.m_mappings)),
      m_next(std::exchange(other.m_next, nullptr)),
      m_left(std::exchange(other.m_left, 0)),
      m_slab_bytes(std::exchange(other.m_slab_bytes, 0)) {
  other.m_mappings.clear();
}

PageSlabs& PageSlabs::operator=(PageSlabs&& other) noexcept {
  if (this != &other) {
    m_page_bytes = other.m_page_bytes;
    m_stride_bytes = other.m_stride_bytes;
    m_mappings = std::move(other.m_mappings);
    other.m_mappings.clear();
    m_next = std::exchange(other.m_next, nullptr);
    m_left = std::exchange(other.m_left, 0);
    m_slab_bytes = std::exchange(other.m_slab_bytes, 0);
  }
  return *this;
}

void* PageSlabs::take() {
  if (m_left == 0) {
    const int64_t bytes = m_slab_bytes == 0 ? std::max(kFirstSlabBytes, m_page_bytes)
                                            : std::min(kMaxSlabBytes, 2 * m_slab_bytes);
    // Pages start at a page boundary, or a huge-page boundary where the mapping asks for huge
    // pages.
    const bool huge = bytes >= kHugeSlabBytes;
    m_mappings.emplace_back(bytes, huge ? ZeroedMapping::kHugePageBytes : m_page_bytes, huge);
    m_next = static_cast<char*>(m_mappings.back().data());
    m_slab_bytes = bytes;
    m_left = bytes / m_stride_bytes;
    poison_memory(m_next, bytes);
  }
  void* page = m_next;
  unpoison_memory(page, m_page_bytes);
  m_next += m_stride_bytes;
  --m_left;
  return page;
}

void PageSlabs::commit() {
  for (ZeroedMapping& m : m_mappings) m.commit();
}

}  // namespace tessera::core
