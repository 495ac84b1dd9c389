#include "runtime/dataset.h"

#include <algorithm>
#include <filesystem>
#include <numeric>

#include <gtest/gtest.h>

namespace tessera::runtime {
namespace {

Dataset counting(int n) {
  Dataset d;
  d.count = n;
  d.rows = 1;
  d.cols = 2;
  d.classes = 10;
  for (int i = 0; i < n; ++i) {
    d.images.push_back(static_cast<float>(i));
    d.images.push_back(static_cast<float>(-i));
    d.labels.push_back(i % 10);
  }
  return d;
}

TEST(EpochOrder, IsAPermutationThatDependsOnlyOnSeedAndEpoch) {
  const auto a = epoch_order(1000, 42, 0);
  std::vector<int64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> iota(1000);
  std::iota(iota.begin(), iota.end(), 0);
  EXPECT_EQ(sorted, iota);
  EXPECT_NE(a, iota);
  EXPECT_EQ(a, epoch_order(1000, 42, 0));
  EXPECT_NE(a, epoch_order(1000, 42, 1));
  EXPECT_NE(a, epoch_order(1000, 43, 0));
}

TEST(Batcher, CoversTheEpochOnceAndKeepsTheLastPartialBatch) {
  const Dataset d = counting(23);
  Batcher b(d, 5, 1, true);
  EXPECT_EQ(b.batches_per_epoch(), 5);
  std::vector<int> sizes;
  std::vector<int64_t> seen;
  Batch batch;
  while (b.next(batch)) {
    sizes.push_back(batch.size);
    for (int i = 0; i < batch.size; ++i) {
      const auto s = static_cast<int64_t>(batch.images[2 * i]);
      EXPECT_EQ(batch.images[2 * i + 1], -static_cast<float>(s));  // whole samples move together
      EXPECT_EQ(batch.labels[i], s % 10);
      seen.push_back(s);
    }
  }
  EXPECT_EQ(sizes, (std::vector<int>{5, 5, 5, 5, 3}));
  EXPECT_EQ(seen, epoch_order(23, 1, 0));
  b.start_epoch(1);
  ASSERT_TRUE(b.next(batch));
  EXPECT_EQ(static_cast<int64_t>(batch.images[0]), epoch_order(23, 1, 1)[0]);
}

TEST(Batcher, WithoutShuffleKeepsFileOrder) {
  const Dataset d = counting(7);
  Batcher b(d, 4, 1, false);
  Batch batch;
  ASSERT_TRUE(b.next(batch));
  EXPECT_EQ(batch.labels, (std::vector<int32_t>{0, 1, 2, 3}));
  ASSERT_TRUE(b.next(batch));
  EXPECT_EQ(batch.labels, (std::vector<int32_t>{4, 5, 6}));
  EXPECT_FALSE(b.next(batch));
}

// The installed Debian package (scripts/debian-packages.txt: dataset-fashion-mnist).
TEST(FashionMnist, InstalledPackageLoadsBothSplits) {
  if (!std::filesystem::exists(kFashionMnistDir))
    GTEST_SKIP() << "dataset-fashion-mnist not installed";
  const Dataset test = load_fashion_mnist(kFashionMnistDir, Split::kTest);
  EXPECT_EQ(test.count, 10000);
  EXPECT_EQ(test.rows, 28);
  EXPECT_EQ(test.cols, 28);
  std::vector<int> per_class(10);
  for (int32_t l : test.labels) ++per_class[l];
  EXPECT_EQ(per_class, std::vector<int>(10, 1000));
  EXPECT_EQ(*std::max_element(test.images.begin(), test.images.end()), 1.0f);
  EXPECT_EQ(*std::min_element(test.images.begin(), test.images.end()), 0.0f);
  EXPECT_EQ(load_fashion_mnist(kFashionMnistDir, Split::kTrain).count, 60000);
}

}  // namespace
}  // namespace tessera::runtime
