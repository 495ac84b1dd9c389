#include "core/zeroed_mapping.h"

#include <cstring>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include <sys/mman.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_ZEROED_MAPPING_ASAN 1
#endif
#elif defined(__SANITIZE_ADDRESS__)
#define TESSERA_ZEROED_MAPPING_ASAN 1
#endif

#ifdef TESSERA_ZEROED_MAPPING_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace tessera::core {

#ifdef TESSERA_ZEROED_MAPPING_ASAN
bool address_sanitizer_enabled() {
  return true;
}
void poison_memory(void* p, int64_t bytes) {
  ASAN_POISON_MEMORY_REGION(p, static_cast<size_t>(bytes));
}
void unpoison_memory(void* p, int64_t bytes) {
  ASAN_UNPOISON_MEMORY_REGION(p, static_cast<size_t>(bytes));
}
#else
bool address_sanitizer_enabled() {
  return false;
}
void poison_memory(void*, int64_t) {}
void unpoison_memory(void*, int64_t) {}
#endif

namespace {

// Mappings of kReuseMinBytes or more that are released are kept, up to kReuseBytes in all, and
// handed to the next request of the same size and alignment, cleared with memset. On a host
// where first touching a page is dear (a virtual machine whose page faults, or whose shadow
// page tables, trap to the hypervisor; tens of microseconds per 4 KiB page have been seen),
// clearing memory that is already resident costs far less than touching fresh pages, and a
// process that builds one simulated core after another (the workload suite) reuses the same
// memory. The cap bounds what the process holds beyond its live mappings.
constexpr int64_t kReuseMinBytes = int64_t{1} << 20;
constexpr size_t kReuseBytes = size_t{64} << 20;

struct Released {
  void* base;
  size_t mapped;
  int64_t align;
};

struct ReleasedMappings {
  std::mutex mutex;
  std::vector<Released> kept;
  size_t bytes = 0;
};

// Never destroyed: mappings held by other static objects may be released during the process's
// exit, after this function's static would have been.
ReleasedMappings& released() {
  static auto* r = new ReleasedMappings;
  return *r;
}

// Touches every 4 KiB page of [p, p + bytes), writing back what it holds. Not instrumented: parts
// of a mapping may be poisoned (slack, pages not yet handed out) and their pages are committed all
// the same.
__attribute__((no_sanitize("address"))) void touch_pages(void* p, size_t bytes) {
  auto* c = static_cast<volatile char*>(p);
  for (size_t i = 0; i < bytes; i += 4096) c[i] = c[i];
}

// A kept mapping of `mapped` bytes aligned to `align`, or null.
void* take_released(size_t mapped, int64_t align) {
  ReleasedMappings& r = released();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (size_t i = 0; i < r.kept.size(); ++i)
    if (r.kept[i].mapped == mapped && r.kept[i].align == align) {
      void* base = r.kept[i].base;
      r.bytes -= mapped;
      r.kept.erase(r.kept.begin() + static_cast<std::ptrdiff_t>(i));
      return base;
    }
  return nullptr;
}

// Keeps a released mapping if there is room; false: the caller unmaps it.
bool keep_released(void* base, size_t mapped, int64_t align) {
  ReleasedMappings& r = released();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.bytes + mapped > kReuseBytes) return false;
  r.kept.push_back({base, mapped, align});
  r.bytes += mapped;
  return true;
}

}  // namespace

ZeroedMapping::ZeroedMapping(int64_t bytes, int64_t align, bool huge) {
  // Over-map by `align` so that the data can start at a multiple of it.
  const size_t mapped = static_cast<size_t>(bytes + align);
  void* base = bytes >= kReuseMinBytes ? take_released(mapped, align) : nullptr;
  const bool reused = base != nullptr;
  if (!reused) {
    base = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) throw std::bad_alloc();
  }
  m_base = base;
  m_align = align;
  m_bytes = bytes;
  const auto at = reinterpret_cast<uintptr_t>(base);
  const auto mask = static_cast<uintptr_t>(align - 1);
  m_data = reinterpret_cast<void*>((at + mask) & ~mask);
  if (reused) std::memset(m_data, 0, static_cast<size_t>(bytes));
  // The slack around the data is not the caller's: an access running into it is reported.
  poison_memory(base, static_cast<char*>(m_data) - static_cast<char*>(base));
  poison_memory(static_cast<char*>(m_data) + bytes,
                static_cast<char*>(base) + mapped - (static_cast<char*>(m_data) + bytes));
  // Advice only: a kernel without transparent huge pages still gives zeroed 4 KiB pages.
  if (huge) madvise(m_data, static_cast<size_t>(bytes), MADV_HUGEPAGE);
}

ZeroedMapping::ZeroedMapping(ZeroedMapping&& other) noexcept
    : m_data(std::exchange(other.m_data, nullptr)),
      m_bytes(std::exchange(other.m_bytes, 0)),
      m_align(std::exchange(other.m_align, 0)),
      m_base(std::exchange(other.m_base, nullptr)) {}

ZeroedMapping& ZeroedMapping::operator=(ZeroedMapping&& other) noexcept {
  if (this != &other) {
    release();
    m_data = std::exchange(other.m_data, nullptr);
    m_bytes = std::exchange(other.m_bytes, 0);
    m_align = std::exchange(other.m_align, 0);
    m_base = std::exchange(other.m_base, nullptr);
  }
  return *this;
}

ZeroedMapping::~ZeroedMapping() {
  release();
}

void ZeroedMapping::release() noexcept {
  if (m_base != nullptr) {
    const size_t mapped = mapped_bytes();
    unpoison_memory(m_base, static_cast<int64_t>(mapped));
    if (m_bytes < kReuseMinBytes || !keep_released(m_base, mapped, m_align)) munmap(m_base, mapped);
  }
  m_data = m_base = nullptr;
  m_bytes = 0;
  m_align = 0;
}

void ZeroedMapping::commit() {
  if (m_data == nullptr) return;
  const auto bytes = static_cast<size_t>(m_bytes);
  const bool huge = reinterpret_cast<uintptr_t>(m_data) % kHugePageBytes == 0;
  if (huge) madvise(m_data, bytes, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
  if (huge && madvise(m_data, bytes, MADV_POPULATE_WRITE) == 0) return;
#endif
  touch_pages(m_data, bytes);
}

}  // namespace tessera::core
