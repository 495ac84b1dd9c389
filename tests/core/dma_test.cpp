#include "core/dma.h"

#include <algorithm>
#include <utility>

#include <gtest/gtest.h>

#include "common/splitmix64.h"
#include "core/state.h"
#include "core_test_util.h"

namespace tessera::core {
namespace {

// The DMA's rows, one word at a time through PagedMemory::read / write: what dma_transfer must do.
void reference_transfer(const DmaRequest& r, ArchState& s) {
  for (int64_t i = 0; i < r.count; ++i)
    for (int64_t k = 0; k < r.chunk; ++k) {
      const int64_t src = r.src + i * r.src_stride + k, dst = r.dst + i * r.dst_stride + k;
      switch (r.dir) {
        case DmaDir::HbmToVmem:
          s.vmem[dst] = s.hbm.read(src);
          break;
        case DmaDir::HbmToSmem:
          s.smem[dst] = s.hbm.read(src);
          break;
        case DmaDir::VmemToHbm:
          s.hbm.write(dst, s.vmem[src]);
          break;
        case DmaDir::SmemToHbm:
          s.hbm.write(dst, s.smem[src]);
          break;
      }
    }
}

// A request of no words (count or chunk 0) moves nothing and touches no page, even at an HBM
// address past the end (the unit checks the addresses of requests that move words only).
TEST(Dma, ARequestOfNoWordsTouchesNoPageWhateverItsAddress) {
  CoreSpec spec = test::small_spec({{"hbm", {{"bytes", 4 * PagedMemory::kPageWords * 4}}}});
  ArchState s(spec);
  for (const DmaDir dir :
       {DmaDir::HbmToVmem, DmaDir::VmemToHbm, DmaDir::HbmToSmem, DmaDir::SmemToHbm})
    for (const auto& [count, chunk] : {std::pair<int64_t, int64_t>{1, 0}, {0, 5}}) {
      DmaRequest r;
      r.dir = dir;
      r.count = count;
      r.chunk = chunk;
      r.flag = 0;
      const bool to_hbm = dir == DmaDir::VmemToHbm || dir == DmaDir::SmemToHbm;
      r.src = to_hbm ? 0 : int64_t{3886588754};
      r.dst = to_hbm ? int64_t{3886588754} : 0;
      dma_transfer(r, s);
    }
  EXPECT_EQ(s.hbm.pages_allocated(), 0);
  EXPECT_EQ(s.flags[0], 8u);  // each request still signals its flag
}

// Requests of every direction with rows of one word up to rows longer than a page, HBM strides
// that keep rows on one page, cross page boundaries, step backwards (negative) or stay put, into
// HBM whose pages are partly untouched: every word equals the word-by-word reference's.
TEST(Dma, StridedRowsCopyLikeWordByWordAcrossPagesAndUntouchedPages) {
  const int64_t page = PagedMemory::kPageWords;
  CoreSpec spec = test::small_spec({{"hbm", {{"bytes", 16 * page * 4}}}});
  ArchState fast(spec), slow(spec);
  SplitMix64 g(7);
  for (int64_t a = 0; a < 16 * page; a += 3 * page)  // pages 0, 3, 6, 9, 12, 15 hold data
    for (int64_t k = 0; k < page; ++k) {
      const auto v = static_cast<uint32_t>(g.next());
      fast.hbm.write(a + k, v);
      slow.hbm.write(a + k, v);
    }
  const int64_t vmem = fast.vmem.size(), smem = fast.smem.size();
  for (int64_t i = 0; i < vmem; ++i) fast.vmem[i] = slow.vmem[i] = static_cast<uint32_t>(g.next());
  for (int64_t i = 0; i < smem; ++i) fast.smem[i] = slow.smem[i] = static_cast<uint32_t>(g.next());
  struct Shape {
    int64_t chunk, count, hbm_stride, local_stride;
  };
  const Shape shapes[] = {{1, 300, 1, 7},         {1, 200, 801, 1},     {5, 100, 1000, 128},
                          {16, 40, 16, 16},       {3, 50, -9, 3},       {1, 20, 0, 1},
                          {page + 9, 2, page, 0}, {200, 30, 4096, 200}, {7, 60, page / 3, 9},
                          {4, 12, page + 1, 4}};
  int requests = 0;
  for (const DmaDir dir :
       {DmaDir::HbmToVmem, DmaDir::VmemToHbm, DmaDir::HbmToSmem, DmaDir::SmemToHbm})
    for (const Shape& sh : shapes) {
      const bool to_hbm = dir == DmaDir::VmemToHbm || dir == DmaDir::SmemToHbm;
      const int64_t local = dir == DmaDir::HbmToSmem || dir == DmaDir::SmemToHbm ? smem : vmem;
      const int64_t local_span = (sh.count - 1) * sh.local_stride + sh.chunk;
      if (local_span > local) continue;  // too large for this memory
      const int64_t hbm_lo = std::min<int64_t>(0, (sh.count - 1) * sh.hbm_stride);
      const int64_t hbm_hi = std::max<int64_t>(0, (sh.count - 1) * sh.hbm_stride) + sh.chunk;
      for (const int64_t start : {page - 3, 5 * page + 17, 2 * page}) {
        const int64_t hbm = start - hbm_lo;
        if (hbm + hbm_hi > 16 * page) continue;
        const int64_t at =
            static_cast<int64_t>(g.next() % static_cast<uint64_t>(local - local_span + 1));
        DmaRequest r;
        r.dir = dir;
        r.count = sh.count;
        r.chunk = sh.chunk;
        r.flag = -1;
        r.src = to_hbm ? at : hbm;
        r.dst = to_hbm ? hbm : at;
        r.src_stride = to_hbm ? sh.local_stride : sh.hbm_stride;
        r.dst_stride = to_hbm ? sh.hbm_stride : sh.local_stride;
        dma_transfer(r, fast);
        reference_transfer(r, slow);
        ++requests;
        ASSERT_EQ(fast.hbm.first_difference(slow.hbm), -1) << "request " << requests;
        ASSERT_TRUE(std::equal(fast.vmem.data(), fast.vmem.data() + vmem, slow.vmem.data()))
            << "request " << requests;
        ASSERT_TRUE(std::equal(fast.smem.data(), fast.smem.data() + smem, slow.smem.data()))
            << "request " << requests;
      }
    }
  EXPECT_GE(requests, 60);  // 66: the shapes that fit each memory, from three starts
}

}  // namespace
}  // namespace tessera::core
