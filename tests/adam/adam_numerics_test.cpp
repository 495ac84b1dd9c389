#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>

#include <gtest/gtest.h>

#include "adam_test_util.h"
#include "numerics/adam.h"

namespace tessera::numerics {
namespace {

using adam_test::random_vector;
using adam_test::same_bits;

TEST(AdamNumerics, StagesEqualTheReferenceUpdateBitForBitOver1000Steps) {
  std::mt19937 rng(11);
  const long n = 203;  // exercises the AVX2 body and the scalar tail of adam_update
  auto theta = random_vector(rng, n, 1.0f);
  auto theta_ref = theta;
  std::vector<float> m(n, 0.0f), v(n, 0.0f), m_ref = m, v_ref = v;
  const AdamConstants c = adam_constants(0.9, 0.999, 1e-8);
  for (int64_t t = 1; t <= 1000; ++t) {
    const auto g = random_vector(rng, n, t % 7 == 0 ? 1e-3f : 0.5f);
    const AdamStepScalars s = adam_step_scalars(1e-3, 0.9, 0.999, t);
    adam_update(theta_ref.data(), m_ref.data(), v_ref.data(), g.data(), n, c, s);
    adam_moments(m.data(), v.data(), g.data(), n, c);
    adam_params(theta.data(), m.data(), v.data(), n, c, s);
  }
  EXPECT_TRUE(same_bits(theta, theta_ref));
  EXPECT_TRUE(same_bits(m, m_ref));
  EXPECT_TRUE(same_bits(v, v_ref));
}

// Values that exercise every IEEE corner of the stages' operations (the vector bodies must agree
// with the scalar definition on each of them).
std::vector<float> with_special_values(std::vector<float> x) {
  const float specials[] = {0.0f,
                            -0.0f,
                            1e-40f,
                            -1e-40f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            3e38f,
                            -3e38f,
                            1e-30f};
  for (size_t i = 0; i < x.size(); i += 7) x[i] = specials[(i / 7) % std::size(specials)];
  return x;
}

TEST(AdamNumerics, WholeArraysEqualTheStagesElementByElementIncludingSpecialValues) {
  std::mt19937 rng(5);
  const long n = 203;  // whole groups of eight and a tail
  const AdamConstants c = adam_constants(0.9, 0.999, 1e-8);
  const AdamStepScalars s = adam_step_scalars(1e-3, 0.9, 0.999, 4);
  const auto g = with_special_values(random_vector(rng, n, 0.5f));
  auto m = with_special_values(random_vector(rng, n, 0.1f)), v = random_vector(rng, n, 0.01f);
  for (float& x : v) x = x * x;
  v[3] = std::numeric_limits<float>::infinity(), v[11] = 0.0f, v[12] = -1.0f;
  auto theta = with_special_values(random_vector(rng, n, 1.0f));
  const auto prev = theta;
  auto m1 = m, v1 = v, theta1 = theta;
  adam_moments(m.data(), v.data(), g.data(), n, c);
  adam_params(theta.data(), m.data(), v.data(), n, c, s);
  double sum1 = 0;
  for (long i = 0; i < n; ++i) {  // one element per call: the scalar definition
    adam_moments(&m1[i], &v1[i], &g[i], 1, c);
    adam_params(&theta1[i], &m1[i], &v1[i], 1, c, s);
    sum1 += static_cast<double>(relative_change(prev[i], theta1[i]));
  }
  EXPECT_TRUE(same_bits(m, m1));
  EXPECT_TRUE(same_bits(v, v1));
  EXPECT_TRUE(same_bits(theta, theta1));
  const double sum = relative_change_sum(prev.data(), theta.data(), n, 0.0);
  EXPECT_EQ(std::memcmp(&sum, &sum1, sizeof sum), 0);
  // Finite values: the fp64 sum's order shows in its bits (NaN above would hide it).
  const auto before = random_vector(rng, 1001, 1.0f), after = random_vector(rng, 1001, 1.0f);
  double ascending = 0;
  for (size_t i = 0; i < before.size(); ++i)
    ascending += static_cast<double>(relative_change(before[i], after[i]));
  EXPECT_EQ(relative_change_sum(before.data(), after.data(), 1001, 0.0), ascending);
}

TEST(AdamNumerics, StepScalarsAreDoubleExpressionsRoundedOnce) {
  const AdamStepScalars s = adam_step_scalars(1e-3, 0.9, 0.999, 3);
  EXPECT_EQ(s.step, static_cast<float>(1e-3 / (1.0 - std::pow(0.9, 3.0))));
  EXPECT_EQ(s.sqrt_bc2, static_cast<float>(std::sqrt(1.0 - std::pow(0.999, 3.0))));
  EXPECT_EQ(adam_constants(0.9, 0.999, 1e-8).omb1, static_cast<float>(1.0 - 0.9));
  EXPECT_NE(adam_constants(0.9, 0.999, 1e-8).omb1, 1.0f - 0.9f);  // not the fp32 subtraction
}

TEST(AdamNumerics, RelativeChangeUsesTinyAndSumsAscendingInDouble) {
  EXPECT_EQ(relative_change(2.0f, 3.0f), 0.5f);
  EXPECT_EQ(relative_change(0.0f, 1e-3f), 1e-3f / kConvergenceTiny);
  EXPECT_EQ(relative_change(0.0f, 0.0f), 0.0f);
  const float prev[3] = {1.0f, 4.0f, -2.0f}, now[3] = {1.5f, 5.0f, -2.0f};
  const double sum = relative_change_sum(prev, now, 3, 0.0);
  EXPECT_EQ(sum, (0.0 + 0.5) + 0.25);
  EXPECT_EQ(convergence_mean(sum, 3), static_cast<float>(0.75 / 3.0));
  // Split sums (the unit's blocks) equal one pass.
  EXPECT_EQ(relative_change_sum(prev + 1, now + 1, 2, relative_change_sum(prev, now, 1, 0.0)), sum);
}

TEST(AdamNumerics, AdamWDecaysThetaBeforeTheStep) {
  std::vector<float> theta = {1.0f, -2.0f}, m = {0, 0}, v = {0, 0};
  const std::vector<float> g = {0.5f, 0.25f};
  auto expect = theta;
  auto me = m, ve = v;
  const float d = adamw_decay_factor(1e-2, 0.1);
  EXPECT_EQ(d, static_cast<float>(1.0 - 1e-2 * 0.1));
  for (float& x : expect) x = x * d;
  adam_update(expect.data(), me.data(), ve.data(), g.data(), 2, adam_constants(0.9, 0.999, 1e-8),
              adam_step_scalars(1e-2, 0.9, 0.999, 1));
  adamw_reference_step(theta.data(), m.data(), v.data(), g.data(), 2, 1e-2, 0.9, 0.999, 1e-8, 0.1,
                       1);
  EXPECT_TRUE(same_bits(theta, expect));
}

}  // namespace
}  // namespace tessera::numerics
