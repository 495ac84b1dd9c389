#include "core/page_slabs.h"

#include <algorithm>
#include <new>
#include <utility>

#include <sys/mman.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_PAGE_SLABS_ASAN 1
#endif
#elif defined(__SANITIZE_ADDRESS__)
#define TESSERA_PAGE_SLABS_ASAN 1
#endif

#ifdef TESSERA_PAGE_SLABS_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace tessera::core {

namespace {

// Under AddressSanitizer every page is followed by a poisoned gap of one page, so that an access
// running off a page's end is reported instead of landing in the next page.
#ifdef TESSERA_PAGE_SLABS_ASAN
constexpr int64_t kStridePages = 2;
void poison(void* p, int64_t bytes) {
  ASAN_POISON_MEMORY_REGION(p, static_cast<size_t>(bytes));
}
void unpoison(void* p, int64_t bytes) {
  ASAN_UNPOISON_MEMORY_REGION(p, static_cast<size_t>(bytes));
}
#else
constexpr int64_t kStridePages = 1;
void poison(void*, int64_t) {}
void unpoison(void*, int64_t) {}
#endif

}  // namespace

PageSlabs::PageSlabs(int64_t page_bytes) : m_page_bytes(page_bytes) {}

PageSlabs::PageSlabs(PageSlabs&& other) noexcept
    : m_page_bytes(other.m_page_bytes),
      m_mappings(std::move(other.m_mappings)),
      m_next(std::exchange(other.m_next, nullptr)),
      m_left(std::exchange(other.m_left, 0)),
      m_slab_bytes(std::exchange(other.m_slab_bytes, 0)) {
  other.m_mappings.clear();
}

PageSlabs& PageSlabs::operator=(PageSlabs&& other) noexcept {
  if (this != &other) {
    release();
    m_page_bytes = other.m_page_bytes;
    m_mappings = std::move(other.m_mappings);
    other.m_mappings.clear();
    m_next = std::exchange(other.m_next, nullptr);
    m_left = std::exchange(other.m_left, 0);
    m_slab_bytes = std::exchange(other.m_slab_bytes, 0);
  }
  return *this;
}

PageSlabs::~PageSlabs() {
  release();
}

void PageSlabs::release() noexcept {
  for (const Mapping& m : m_mappings) {
    unpoison(m.base, static_cast<int64_t>(m.bytes));
    munmap(m.base, m.bytes);
  }
  m_mappings.clear();
  m_next = nullptr;
  m_left = 0;
  m_slab_bytes = 0;
}

void* PageSlabs::take() {
  if (m_left == 0) {
    const int64_t bytes = m_slab_bytes == 0 ? std::max(kFirstSlabBytes, m_page_bytes)
                                            : std::min(kMaxSlabBytes, 2 * m_slab_bytes);
    // Over-map so that the pages start at a page boundary, or a huge-page boundary where the
    // mapping asks for huge pages.
    const bool huge = bytes >= kHugeSlabBytes;
    const int64_t align = huge ? kHugePageBytes : m_page_bytes;
    const size_t mapped = static_cast<size_t>(bytes + align);
    void* base = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) throw std::bad_alloc();
    m_mappings.push_back({base, mapped});
    const auto at = reinterpret_cast<uintptr_t>(base);
    const auto mask = static_cast<uintptr_t>(align - 1);
    m_next = reinterpret_cast<char*>((at + mask) & ~mask);
    m_slab_bytes = bytes;
    m_left = bytes / (m_page_bytes * kStridePages);
    poison(base, static_cast<int64_t>(mapped));
    // Advice only: a kernel without transparent huge pages still gives zeroed 4 KiB pages.
    if (huge) madvise(m_next, static_cast<size_t>(bytes), MADV_HUGEPAGE);
  }
  void* page = m_next;
  unpoison(page, m_page_bytes);
  m_next += m_page_bytes * kStridePages;
  --m_left;
  return page;
}

}  // namespace tessera::core
