// ZeroedMapping: an anonymous memory mapping of zeros. The kernel zeroes a mapping's pages when
// they are first touched, so it costs no user-space clearing and only the pages that are written
// become resident.
//
// A mapping asked for with `huge` starts on a 2 MiB boundary and is advised MADV_HUGEPAGE: the
// host then takes one page fault per 2 MiB touched instead of one per 4 KiB. Page faults are the
// dearest part of first touching memory, the more so on virtual machines, where each one may trap
// to the hypervisor; the price is that touching one word of a 2 MiB region commits all of it.
//
// Large mappings released by the process are kept (64 MiB in all) and reused, cleared, for later
// requests of the same size (zeroed_mapping.cpp says why).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera::core {

// Under AddressSanitizer, marks memory unaddressable / addressable again (no-ops otherwise). A
// ZeroedMapping makes its whole range addressable again before it unmaps it.
bool address_sanitizer_enabled();
void poison_memory(void* p, int64_t bytes);
void unpoison_memory(void* p, int64_t bytes);

class ZeroedMapping {
 public:
  static constexpr int64_t kHugePageBytes = int64_t{2} << 20;

  ZeroedMapping() = default;
  // `bytes` of zeros starting at a multiple of `align` (a power of two; kHugePageBytes or more
  // when `huge`). Throws std::bad_alloc when the host refuses the mapping.
  ZeroedMapping(int64_t bytes, int64_t align, bool huge);
  ZeroedMapping(ZeroedMapping&& other) noexcept;
  ZeroedMapping& operator=(ZeroedMapping&& other) noexcept;
  ZeroedMapping(const ZeroedMapping&) = delete;
  ZeroedMapping& operator=(const ZeroedMapping&) = delete;
  ~ZeroedMapping();

  void* data() const { return m_data; }
  // Makes every page resident now, so that the first accesses later cost no page fault. Where the
  // data starts on a 2 MiB boundary: advised huge pages and populated by the kernel
  // (MADV_POPULATE_WRITE). Elsewhere: a write to each 4 KiB page from user space, since on a
  // virtual machine pages the kernel populates can still trap on the first user access. The
  // contents stay as they are.
  void commit();

 private:
  void release() noexcept;
  // The whole mapping: the data and the slack that aligns it.
  size_t mapped_bytes() const { return static_cast<size_t>(m_bytes + m_align); }

  void* m_data = nullptr;
  int64_t m_bytes = 0;
  int64_t m_align = 0;
  void* m_base = nullptr;  // what mmap returned: m_data minus the alignment slack
};

}  // namespace tessera::core
