#include "graph/optimizer.h"

#include <bit>
#include <cmath>

#include <gtest/gtest.h>

#include "common/error.h"
#include "common/splitmix64.h"

namespace tessera::graph {
namespace {

std::vector<float> random_floats(size_t n, SplitMix64& rng) {
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(2.0 * rng.unit() - 1.0);
  return v;
}

// The reference order of the issue, written out independently, one fp32 rounding per operation.
TEST(Optimizer, AdamFollowsTheReferenceOrderBitForBit) {
  const OptimizerConfig cfg{OptimizerKind::kAdam, 1e-3, 0.0, 0.9, 0.999, 1e-8};
  SplitMix64 rng(3);
  std::vector<float> theta = random_floats(257, rng), m(257, 0.0f), v(257, 0.0f);
  std::vector<float> mine = theta;
  Optimizer opt(cfg, {257});
  for (int t = 1; t <= 5; ++t) {
    const std::vector<float> g = random_floats(257, rng);
    opt.step({mine.data()}, {g.data()});
    const double bc1 = 1.0 - std::pow(0.9, t), bc2 = 1.0 - std::pow(0.999, t);
    const float step = static_cast<float>(1e-3 / bc1),
                sqrt_bc2 = static_cast<float>(std::sqrt(bc2));
    const float b1 = 0.9f, b2 = 0.999f, omb1 = static_cast<float>(1.0 - 0.9),
                omb2 = static_cast<float>(1.0 - 0.999);
    const float eps = 1e-8f;
    for (size_t i = 0; i < theta.size(); ++i) {
      volatile float a = b1 * m[i], b = omb1 * g[i];
      m[i] = a + b;
      volatile float c = b2 * v[i], d = omb2 * g[i], e = d * g[i];
      v[i] = c + e;
      volatile float root = std::sqrt(v[i]), q = root / sqrt_bc2, denom = q + eps, r = m[i] / denom;
      volatile float delta = -step * r;
      theta[i] = theta[i] + delta;
    }
    for (size_t i = 0; i < theta.size(); ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(mine[i]), std::bit_cast<uint32_t>(theta[i]))
          << "step " << t << " i " << i;
  }
  EXPECT_EQ(opt.steps(), 5);
  EXPECT_EQ(opt.state().size(), 2u);  // m, v
  for (size_t i = 0; i < m.size(); ++i) {
    ASSERT_EQ(std::bit_cast<uint32_t>(opt.state()[0][i]), std::bit_cast<uint32_t>(m[i]));
    ASSERT_EQ(std::bit_cast<uint32_t>(opt.state()[1][i]), std::bit_cast<uint32_t>(v[i]));
  }
}

TEST(Optimizer, FirstAdamStepMovesEachWeightByAboutLr) {
  Optimizer opt(OptimizerConfig{OptimizerKind::kAdam, 1e-2, 0.0, 0.9, 0.999, 1e-8}, {3});
  std::vector<float> theta{1.0f, 1.0f, 1.0f};
  const std::vector<float> g{0.5f, -2.0f, 1e-3f};
  opt.step({theta.data()}, {g.data()});
  EXPECT_NEAR(theta[0], 0.99f, 1e-6);
  EXPECT_NEAR(theta[1], 1.01f, 1e-6);
  EXPECT_NEAR(theta[2], 0.99f, 1e-5);
}

TEST(Optimizer, SgdMomentumAccumulatesVelocity) {
  Optimizer opt(OptimizerConfig{OptimizerKind::kSgd, 0.1, 0.9, 0.9, 0.999, 1e-8}, {1});
  std::vector<float> theta{1.0f};
  const std::vector<float> g{1.0f};
  opt.step({theta.data()}, {g.data()});
  EXPECT_FLOAT_EQ(theta[0], 0.9f);  // vel 1
  opt.step({theta.data()}, {g.data()});
  EXPECT_FLOAT_EQ(theta[0], 0.71f);  // vel 1.9
  EXPECT_FLOAT_EQ(opt.state()[0][0], 1.9f);
}

TEST(Optimizer_bad, UnknownNameIsAnError) {
  EXPECT_EQ(optimizer_from_name("adam"), OptimizerKind::kAdam);
  try {
    optimizer_from_name("rmsprop");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "optimizer: unknown optimizer 'rmsprop' (known: sgd, adam)");
  }
}

}  // namespace
}  // namespace tessera::graph
