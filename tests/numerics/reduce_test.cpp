// tree_sum / tree_max over vector-register widths (the reduce unit's 128 lanes and more): equal,
// bit for bit, to the pairwise tree of the contract written out one pair at a time.
#include "numerics/reduce.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace tessera::numerics {
namespace {

// The contract literally: pad to a power of two with the identity, then combine pairs level by
// level.
template <typename Op>
float pairwise_tree(std::vector<float> v, float identity, Op op) {
  size_t width = 1;
  while (width < v.size()) width *= 2;
  v.resize(width, identity);
  while (v.size() > 1) {
    std::vector<float> next(v.size() / 2);
    for (size_t i = 0; i < next.size(); ++i) next[i] = op(v[2 * i], v[2 * i + 1]);
    v = next;
  }
  return v[0];
}

std::vector<float> values(std::mt19937& rng, int n, bool specials) {
  std::uniform_real_distribution<float> d(-1e6f, 1e6f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(rng);
  if (specials) {
    const float s[] = {0.0f, -0.0f, 1e-42f, std::numeric_limits<float>::infinity(), -3e38f, 3e38f};
    for (size_t i = 0; i < v.size(); i += 5) v[i] = s[(i / 5) % std::size(s)];
  }
  return v;
}

uint32_t bits(float x) {
  return std::bit_cast<uint32_t>(x);
}

TEST(TreeReduce, WideRowsEqualThePairwiseTreeBitForBit) {
  std::mt19937 rng(3);
  for (int n : {8, 16, 100, 128, 256, 1000, 2048}) {
    for (bool specials : {false, true}) {
      const std::vector<float> v = values(rng, n, specials);
      const float sum = pairwise_tree(v, 0.0f, [](float a, float b) { return a + b; });
      const float max = pairwise_tree(v, -std::numeric_limits<float>::infinity(), fmax_ieee);
      EXPECT_EQ(bits(tree_sum(v.data(), n)), bits(sum)) << n << " " << specials;
      EXPECT_EQ(bits(tree_max(v.data(), n)), bits(max)) << n << " " << specials;
    }
  }
}

TEST(TreeReduce, WideMaxKeepsPositiveZeroAndNanAnywhere) {
  std::vector<float> zeros(128, -0.0f);
  EXPECT_EQ(bits(tree_max(zeros.data(), 128)), bits(-0.0f));
  zeros[77] = 0.0f;
  EXPECT_EQ(bits(tree_max(zeros.data(), 128)), bits(0.0f));
  std::vector<float> v(128, 1.0f);
  v[93] = std::nanf("");
  EXPECT_TRUE(std::isnan(tree_max(v.data(), 128)));
  EXPECT_TRUE(std::isnan(tree_sum(v.data(), 128)));
}

}  // namespace
}  // namespace tessera::numerics
