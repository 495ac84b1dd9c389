#include "core/page_slabs.h"

#include <cstdint>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/state.h"
#include "core_test_util.h"

namespace tessera::core {
namespace {

constexpr int64_t kPage = PagedMemory::kPageWords * 4;

// Enough pages to pass through the growing mappings into the huge-page ones (1 + 2 + 4 + 8 +
// 16 MiB), so every kind of mapping is exercised.
constexpr int kPagesPastHugeSlabs = static_cast<int>((int64_t{40} << 20) / kPage);

using test::all_zero;

TEST(PageSlabs, PagesAreZeroAlignedDistinctAndKeepWhatIsWrittenToThem) {
  PageSlabs slabs(kPage);
  std::vector<uint32_t*> pages;
  std::set<uintptr_t> starts;
  for (int i = 0; i < kPagesPastHugeSlabs; ++i) {
    auto* p = static_cast<uint32_t*>(slabs.take());
    ASSERT_EQ(reinterpret_cast<uintptr_t>(p) % kPage, 0u) << "page " << i;
    ASSERT_TRUE(all_zero(p, kPage)) << "page " << i;
    ASSERT_TRUE(starts.insert(reinterpret_cast<uintptr_t>(p)).second) << "page " << i;
    // Each page's first and last word name it: a page handed out twice or overlapping another
    // would be overwritten below.
    p[0] = static_cast<uint32_t>(i);
    p[PagedMemory::kPageWords - 1] = ~static_cast<uint32_t>(i);
    pages.push_back(p);
  }
  for (size_t i = 0; i < pages.size(); ++i) {
    EXPECT_EQ(pages[i][0], static_cast<uint32_t>(i));
    EXPECT_EQ(pages[i][PagedMemory::kPageWords - 1], ~static_cast<uint32_t>(i));
    EXPECT_TRUE(all_zero(pages[i] + 1, kPage - 8));
  }
}

TEST(PageSlabs, AMovedFromSlabsStartsAfreshAndTheMovedToOneKeepsThePages) {
  PageSlabs a(kPage);
  auto* p = static_cast<uint32_t*>(a.take());
  p[7] = 42;
  PageSlabs b(std::move(a));
  EXPECT_EQ(p[7], 42u);
  auto* q = static_cast<uint32_t*>(b.take());
  EXPECT_NE(p, q);
  auto* r = static_cast<uint32_t*>(a.take());  // NOLINT(bugprone-use-after-move): reset state
  EXPECT_TRUE(all_zero(r, kPage));
  PageSlabs c(kPage);
  c = std::move(b);
  EXPECT_EQ(p[7], 42u);
}

TEST(PageSlabs, PagedMemoryOverManySlabsReadsBackWhatWasWrittenInAnyOrder) {
  PagedMemory m(PagedMemory::kPageWords * (kPagesPastHugeSlabs + 8));
  // Pages are written back to front, so allocation order differs from address order.
  for (int64_t page = kPagesPastHugeSlabs + 7; page >= 0; page -= 3)
    m.write(page * PagedMemory::kPageWords + page % 97, static_cast<uint32_t>(page * 2654435761u));
  for (int64_t page = 0; page < kPagesPastHugeSlabs + 8; ++page) {
    const bool written = (kPagesPastHugeSlabs + 7 - page) % 3 == 0;
    EXPECT_EQ(m.read(page * PagedMemory::kPageWords + page % 97),
              written ? static_cast<uint32_t>(page * 2654435761u) : 0u)
        << "page " << page;
    EXPECT_EQ(m.page_data(page) != nullptr, written) << "page " << page;
  }
  const int64_t last = kPagesPastHugeSlabs + 7;
  PagedMemory moved(std::move(m));
  EXPECT_EQ(moved.read(last * PagedMemory::kPageWords + last % 97),
            static_cast<uint32_t>(last * 2654435761u));
}

}  // namespace
}  // namespace tessera::core
