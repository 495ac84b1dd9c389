#include "core/state.h"

#include <gtest/gtest.h>

#include "core_test_util.h"

namespace tessera::core {
namespace {

TEST(State, SixteenGibHbmCostsNothingUntilWrittenAndWritingAt15GibAllocatesOnePage) {
  CoreSpec spec = test::small_spec({{"hbm", {{"bytes", 16ll << 30}}}});
  ArchState s(spec);
  EXPECT_EQ(s.hbm.size(), (16ll << 30) / 4);
  EXPECT_EQ(s.hbm.pages_allocated(), 0);
  const int64_t at = (15ll << 30) / 4;
  EXPECT_EQ(s.hbm.read(at), 0u);
  EXPECT_EQ(s.hbm.pages_allocated(), 0);
  s.hbm.write(at, 0xdeadbeef);
  EXPECT_EQ(s.hbm.pages_allocated(), 1);
  EXPECT_EQ(s.hbm.read(at), 0xdeadbeefu);
  EXPECT_EQ(s.hbm.read(at + 1), 0u);
}

TEST(State, PagedBlocksCrossPageBoundariesAndUntouchedPagesReadZero) {
  PagedMemory m(PagedMemory::kPageWords * 4);
  std::vector<uint32_t> w(PagedMemory::kPageWords + 10);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint32_t>(i * 7 + 1);
  const int64_t at = PagedMemory::kPageWords - 5;
  m.write_block(at, w.data(), static_cast<int64_t>(w.size()));
  EXPECT_EQ(m.pages_allocated(), 3);
  std::vector<uint32_t> r(w.size() + 20, 1u);
  m.read_block(at - 10, r.data(), static_cast<int64_t>(r.size()));
  for (int i = 0; i < 10; ++i) EXPECT_EQ(r[static_cast<size_t>(i)], 0u);
  for (size_t i = 0; i < w.size(); ++i) ASSERT_EQ(r[i + 10], w[i]);
  EXPECT_EQ(r.back(), 0u);
  PagedMemory other(PagedMemory::kPageWords * 4);
  EXPECT_FALSE(m.same_contents(other));
  other.write_block(at, w.data(), static_cast<int64_t>(w.size()));
  other.write(PagedMemory::kPageWords * 3 + 3, 0);  // a touched page of zeros equals untouched
  EXPECT_TRUE(m.same_contents(other));
}

TEST(State, CommittingHbmAllocatesExactlyThePagesOfTheRangeWhichStillReadZero) {
  PagedMemory m(PagedMemory::kPageWords * 8);
  m.write(2, 7);
  m.commit(PagedMemory::kPageWords - 1, PagedMemory::kPageWords + 2);  // pages 0, 1 and 2
  EXPECT_EQ(m.pages_allocated(), 3);
  m.commit(0, 0);
  EXPECT_EQ(m.pages_allocated(), 3);
  EXPECT_EQ(m.read(2), 7u);  // a page written before keeps its contents
  std::vector<uint32_t> r(static_cast<size_t>(PagedMemory::kPageWords * 3), 1u);
  m.read_block(0, r.data(), static_cast<int64_t>(r.size()));
  for (size_t i = 0; i < r.size(); ++i) ASSERT_EQ(r[i], i == 2 ? 7u : 0u) << i;
  m.write(PagedMemory::kPageWords * 2 + 5, 9);
  EXPECT_EQ(m.pages_allocated(), 3);
  EXPECT_EQ(m.read(PagedMemory::kPageWords * 2 + 5), 9u);
  EXPECT_TRUE(m.same_contents([] {
    PagedMemory o(PagedMemory::kPageWords * 8);
    o.write(2, 7);
    o.write(PagedMemory::kPageWords * 2 + 5, 9);
    return o;
  }()));
}

TEST(State, PhiloxMatchesThePublishedKnownAnswers) {
  // Random123 kat_vectors: philox4x32_10 with counter and key all zero, and all ones.
  const uint32_t c0[4] = {0, 0, 0, 0}, k0[2] = {0, 0};
  uint32_t out[4];
  philox4x32_10(c0, k0, out);
  EXPECT_EQ(out[0], 0x6627e8d5u);
  EXPECT_EQ(out[1], 0xe169c58du);
  EXPECT_EQ(out[2], 0xbc57ac4cu);
  EXPECT_EQ(out[3], 0x9b00dbd8u);
  const uint32_t c1[4] = {~0u, ~0u, ~0u, ~0u}, k1[2] = {~0u, ~0u};
  philox4x32_10(c1, k1, out);
  EXPECT_EQ(out[0], 0x408f276du);
  EXPECT_EQ(out[1], 0x41c83b0eu);
  EXPECT_EQ(out[2], 0xa20bc7c6u);
  EXPECT_EQ(out[3], 0x6d5451fdu);
  const uint32_t c2[4] = {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u};
  const uint32_t k2[2] = {0xa4093822u, 0x299f31d0u};
  philox4x32_10(c2, k2, out);
  EXPECT_EQ(out[0], 0xd16cfe09u);
  EXPECT_EQ(out[1], 0x94fdccebu);
  EXPECT_EQ(out[2], 0x5001e420u);
  EXPECT_EQ(out[3], 0x24126ea1u);
}

TEST(State, RngStreamIsTheSameWhateverTheChunking) {
  RngState a, b;
  a.seed = b.seed = 42;
  std::vector<uint32_t> x(37), y(37);
  a.generate(x.data(), 37);
  b.generate(y.data(), 3);
  b.generate(y.data() + 3, 30);
  b.generate(y.data() + 33, 4);
  EXPECT_EQ(x, y);
  EXPECT_EQ(a.position, 37u);
}

}  // namespace
}  // namespace tessera::core
