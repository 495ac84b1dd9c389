// The token choice of numerics/sampling.h: greedy ties, the top-k cut, Gumbel-max frequencies
// against softmax(x / T), the draws of the RNG stream, and the errors.
#include "numerics/sampling.h"

#include <cmath>

#include <gtest/gtest.h>

#include "common/error.h"
#include "numerics/philox.h"

namespace tessera::numerics {
namespace {

TEST(Sampling, GreedyTakesTheLowestIndexOfTheLargestLogit) {
  const Sampling greedy{.temperature = 0, .top_k = 0, .seed = 0};
  EXPECT_EQ(sample_token({1, 3, 2, 3}, greedy, nullptr), 1);
  EXPECT_EQ(sample_token({-5}, greedy, nullptr), 0);
}

TEST(Sampling, FrequenciesFollowSoftmaxOfLogitsOverTemperature) {
  const std::vector<float> logits = {0.0f, std::log(2.0f), std::log(4.0f), -1e30f};
  for (const double t : {1.0, 2.0}) {
    const Sampling s{.temperature = t, .top_k = 0, .seed = 7};
    std::vector<int> count(4);
    const int draws = 20000;
    for (int i = 0; i < draws; ++i)
      ++count[static_cast<size_t>(sample_token(logits, s, sampling_draw(s, i, 1024, 4).data()))];
    const double w[3] = {1, std::pow(2, 1 / t), std::pow(4, 1 / t)};
    const double z = w[0] + w[1] + w[2];
    for (int k = 0; k < 3; ++k)
      EXPECT_NEAR(count[static_cast<size_t>(k)] / double(draws), w[k] / z, 0.012) << t << " " << k;
    EXPECT_EQ(count[3], 0);
  }
}

TEST(Sampling, TopKKeepsTheKLargestTiesToTheLowerIndex) {
  const std::vector<float> logits = {5, 1, 5, 4, 5, 0};
  const Sampling top1{.temperature = 100, .top_k = 1, .seed = 3};
  const Sampling top2{.temperature = 100, .top_k = 2, .seed = 3};
  std::vector<int> seen(6);
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(sample_token(logits, top1, sampling_draw(top1, i, 1024, 6).data()), 0);
    ++seen[static_cast<size_t>(sample_token(logits, top2, sampling_draw(top2, i, 1024, 6).data()))];
  }
  EXPECT_GT(seen[0], 0);
  EXPECT_GT(seen[2], 0);
  EXPECT_EQ(seen[0] + seen[2], 200);
}

TEST(Sampling, DrawIIsWordsIWOfTheStream) {
  const Sampling s{.temperature = 1, .top_k = 0, .seed = 11};
  uint32_t w[3];
  philox_stream(11, 2 * 1024, w, 3);
  EXPECT_EQ(sampling_draw(s, 2, 1024, 3), std::vector<uint32_t>(w, w + 3));
}

TEST(Sampling, Errors_bad) {
  auto error = [](const Sampling& s, int n) {
    try {
      check_sampling(s, n);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error({.temperature = -1, .top_k = 0, .seed = 0}, 4),
            "sampling: temperature must be a finite number >= 0, got -1.000000");
  EXPECT_EQ(error({.temperature = INFINITY, .top_k = 0, .seed = 0}, 4),
            "sampling: temperature must be a finite number >= 0, got inf");
  EXPECT_EQ(error({.temperature = 1, .top_k = 5, .seed = 0}, 4),
            "sampling: top-k must be in [0, 4] (0: no cut), got 5");
  EXPECT_EQ(error({.temperature = 1, .top_k = 0, .seed = 0}, 0), "sampling: no logits");
  EXPECT_EQ(error({.temperature = 0, .top_k = 4, .seed = 0}, 4), "(no error)");
}

}  // namespace
}  // namespace tessera::numerics
