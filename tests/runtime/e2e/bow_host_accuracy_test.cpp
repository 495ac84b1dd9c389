// The bag-of-words recipe on fortunes-topics on the host fp32 reference (runtime/bow_train.h):
// the test accuracy after the 5 epochs reaches the workload's 46%.
#include <filesystem>

#include <gtest/gtest.h>

#include "runtime/bow_train.h"

namespace tessera::runtime {
namespace {

TEST(BowHostAccuracy, TheRecipeReachesFortySixPercentOnTheTestSamples) {
  if (!std::filesystem::exists(kFortunesDir)) GTEST_SKIP() << "fortunes is not installed";
  const TopicCorpus data = load_fortune_topics();
  const std::vector<BowEpoch> e = train_bow_host(data, BowRecipe{}, graph::Numerics::kF32);
  ASSERT_EQ(e.size(), 5u);
  EXPECT_GE(e.back().test_accuracy, 0.46);
  EXPECT_LT(e.back().loss, e.front().loss);
}

}  // namespace
}  // namespace tessera::runtime
