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

// A dataset of file bytes (pixels) batches to the same floats as the same dataset converted to
// pixel / 255 up front, sample for sample, and take() keeps the same first samples.
TEST(Batcher, PixelBytesBatchLikeTheirValuesAsFloats) {
  Dataset bytes;
  bytes.count = 37;
  bytes.rows = 2;
  bytes.cols = 7;
  bytes.classes = 10;
  for (int64_t i = 0; i < bytes.count * 14; ++i)
    bytes.pixels.push_back(static_cast<uint8_t>((i * 37) % 256));  // every byte value occurs
  for (int64_t s = 0; s < bytes.count; ++s) bytes.labels.push_back(static_cast<int32_t>(s % 10));
  Dataset floats = bytes;
  floats.pixels.clear();
  for (uint8_t p : bytes.pixels) floats.images.push_back(static_cast<float>(p) / 255.0f);
  for (const bool shuffle : {true, false}) {
    for (const int64_t n : {int64_t{37}, int64_t{20}}) {
      const Dataset a = take(bytes, n), b = take(floats, n);
      ASSERT_EQ(a.pixels.size(), static_cast<size_t>(n * 14));
      ASSERT_TRUE(a.images.empty());
      Batcher ba(a, 8, 3, shuffle), bb(b, 8, 3, shuffle);
      Batch x, y;
      int batches = 0;
      while (ba.next(x)) {
        ASSERT_TRUE(bb.next(y));
        EXPECT_EQ(x.images, y.images);  // bit-identical floats
        EXPECT_EQ(x.labels, y.labels);
        ++batches;
      }
      EXPECT_FALSE(bb.next(y));
      EXPECT_EQ(batches, (n + 7) / 8);
    }
  }
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
  std::vector<float> values(static_cast<size_t>(test.count * test.sample_size()));
  for (int64_t s = 0; s < test.count; ++s)
    test.copy_image(s, values.data() + s * test.sample_size());
  EXPECT_EQ(*std::max_element(values.begin(), values.end()), 1.0f);
  EXPECT_EQ(*std::min_element(values.begin(), values.end()), 0.0f);
  EXPECT_EQ(load_fashion_mnist(kFashionMnistDir, Split::kTrain).count, 60000);
}

}  // namespace
}  // namespace tessera::runtime
