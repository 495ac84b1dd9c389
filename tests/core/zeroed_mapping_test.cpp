#include "core/zeroed_mapping.h"

#include <cstdint>
#include <cstring>
#include <utility>

#include <gtest/gtest.h>

#include "core/zeroed_array.h"
#include "core_test_util.h"

namespace tessera::core {
namespace {

using test::all_zero;

uintptr_t address(const void* p) {
  return reinterpret_cast<uintptr_t>(p);
}

TEST(ZeroedMapping, StartsAlignedAndZeroedAndKeepsWhatIsWritten) {
  for (const int64_t align : {int64_t{4096}, ZeroedMapping::kHugePageBytes}) {
    const int64_t bytes = 3 * ZeroedMapping::kHugePageBytes + 123;
    ZeroedMapping m(bytes, align, align == ZeroedMapping::kHugePageBytes);
    ASSERT_NE(m.data(), nullptr);
    EXPECT_EQ(address(m.data()) % static_cast<uintptr_t>(align), 0u) << align;
    EXPECT_TRUE(all_zero(m.data(), bytes)) << align;
    auto* b = static_cast<unsigned char*>(m.data());
    b[0] = 1;
    b[bytes - 1] = 2;
    EXPECT_EQ(b[0], 1);
    EXPECT_EQ(b[bytes - 1], 2);
    EXPECT_TRUE(all_zero(b + 1, bytes - 2)) << align;
  }
}

TEST(ZeroedMapping, CommitKeepsTheContents) {
  for (const int64_t align : {int64_t{4096}, ZeroedMapping::kHugePageBytes}) {
    const int64_t bytes = 5 * ZeroedMapping::kHugePageBytes;
    ZeroedMapping m(bytes, align, false);
    auto* w = static_cast<uint32_t*>(m.data());
    const int64_t words = bytes / 4;
    // Some pages written before the commit, the rest untouched.
    for (int64_t i = 0; i < words; i += 4099) w[i] = static_cast<uint32_t>(i) | 1u;
    m.commit();
    for (int64_t i = 0; i < words; ++i)
      ASSERT_EQ(w[i], i % 4099 == 0 ? (static_cast<uint32_t>(i) | 1u) : 0u)
          << "word " << i << ", align " << align;
    m.commit();  // again: still the same
    EXPECT_EQ(w[4099], 4099u | 1u);
    EXPECT_EQ(w[4100], 0u);
  }
}

TEST(ZeroedMapping, AMovedFromMappingIsEmptyAndTheMovedToOneKeepsTheData) {
  ZeroedMapping a(8192, 4096, false);
  static_cast<uint32_t*>(a.data())[5] = 55;
  void* const data = a.data();
  ZeroedMapping b(std::move(a));
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state
  a.commit();                    // an empty mapping commits nothing
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(static_cast<uint32_t*>(b.data())[5], 55u);
  ZeroedMapping c(4096, 4096, false);
  c = std::move(b);
  EXPECT_EQ(c.data(), data);
  EXPECT_EQ(static_cast<uint32_t*>(c.data())[5], 55u);
}

TEST(ZeroedMapping, ALargeMappingReleasedAndTakenAgainIsZeroed) {
  // Large released mappings are kept and handed out again: whichever memory a new one gets, it
  // reads as zeros, committed or not.
  const int64_t bytes = int64_t{4} << 20;
  for (int round = 0; round < 3; ++round) {
    ZeroedMapping m(bytes, ZeroedMapping::kHugePageBytes, round == 1);
    ASSERT_TRUE(all_zero(m.data(), bytes)) << "round " << round;
    if (round == 2) m.commit();
    std::memset(m.data(), 0xa5, static_cast<size_t>(bytes));
  }
  ZeroedArray<uint32_t> a(bytes / 4);
  EXPECT_TRUE(all_zero(a.data(), bytes));
}

TEST(ZeroedArray, IsZeroedKeepsValuesThroughACommitAndLargeOnesStartOnAHugePage) {
  ZeroedArray<uint32_t> small(1000);
  EXPECT_EQ(small.size(), 1000);
  EXPECT_TRUE(all_zero(small.data(), 4000));
  small[999] = 7;
  small.commit();
  EXPECT_EQ(small[999], 7u);
  EXPECT_EQ(small[998], 0u);

  ZeroedArray<float> large(ZeroedMapping::kHugePageBytes);  // 8 MiB of floats
  EXPECT_EQ(address(large.data()) % static_cast<uintptr_t>(ZeroedMapping::kHugePageBytes), 0u);
  large[12345] = 1.5f;
  large.commit();
  EXPECT_EQ(large[12345], 1.5f);
  EXPECT_TRUE(all_zero(large.data(), 12345 * 4));

  ZeroedArray<uint32_t> empty(0);  // still a valid (one-element) array
  EXPECT_EQ(empty.size(), 0);
  EXPECT_NE(empty.data(), nullptr);
}

TEST(ZeroedArrayDeathTest, AnAccessPastTheEndIsReportedUnderAddressSanitizer) {
  if (!address_sanitizer_enabled()) GTEST_SKIP() << "only AddressSanitizer sees the slack";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ZeroedArray<uint32_t> a(1000);
  EXPECT_DEATH(
      {
        volatile uint32_t* p = a.data();
        p[1000] = 1;
      },
      "use-after-poison");
}

}  // namespace
}  // namespace tessera::core
