// PageSlabs: zero-filled pages of a fixed size handed out one at a time from ZeroedMappings (no
// user-space clearing; only the parts of a page that are written become resident).
//
// Mappings grow geometrically (kFirstSlabBytes, doubling up to kMaxSlabBytes), so a memory of
// which a run writes a few pages reserves little address space and one that writes gigabytes
// needs few mappings. Mappings of kHugeSlabBytes or more ask for transparent huge pages: the host
// then takes one fault per 2 MiB instead of one per 4 KiB. Pages are handed out in order, so only
// the last huge page of the newest mapping can be resident while partly unused, and a memory only
// reaches such mappings after it has written kHugeSlabBytes - 1 MiB or more.
//
// Move-only; the pages live until the PageSlabs is destroyed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/zeroed_mapping.h"

namespace tessera::core {

class PageSlabs {
 public:
  static constexpr int64_t kFirstSlabBytes = int64_t{1} << 20;
  static constexpr int64_t kMaxSlabBytes = int64_t{32} << 20;
  static constexpr int64_t kHugeSlabBytes = int64_t{8} << 20;

  // page_bytes: a power of two no larger than kFirstSlabBytes.
  explicit PageSlabs(int64_t page_bytes);
  PageSlabs(PageSlabs&& other) noexcept;
  PageSlabs& operator=(PageSlabs&& other) noexcept;
  PageSlabs(const PageSlabs&) = delete;
  PageSlabs& operator=(const PageSlabs&) = delete;

  // A new page of zeros, page_bytes long and aligned to page_bytes. Throws std::bad_alloc when the
  // host refuses the mapping.
  void* take();
  // Makes every mapping resident now (ZeroedMapping::commit), the pages still to be handed out
  // included: none of them then costs a page fault when first written.
  void commit();

 private:
  int64_t m_page_bytes;
  int64_t m_stride_bytes;  // from one page to the next
  std::vector<ZeroedMapping> m_mappings;
  char* m_next = nullptr;    // the next page of the newest mapping
  int64_t m_left = 0;        // pages left in the newest mapping
  int64_t m_slab_bytes = 0;  // the newest mapping's size, without its alignment slack
};

}  // namespace tessera::core
