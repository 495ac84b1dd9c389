// Adam on the Adam optimizer unit in training (compiler AdamOn::kUnit, the default) against the
// vector-unit lowering: bit-identical losses, weights and optimizer state; the optimizer's measured
// off-chip bytes per step (unit: theta, g in, theta out; vector unit: also m and v both ways).
#include <cstring>

#include <gtest/gtest.h>

#include "chip_test_data.h"
#include "common/splitmix64.h"
#include "core/spec.h"
#include "runtime/train_chip.h"

namespace tessera::runtime {
namespace {

constexpr int kBatch = 8;
constexpr int64_t kMlpParams = 784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10;

core::CoreSpec config() {
  return chip_test::tpu_v2_like();
}

ChipTrainer trainer(compiler::AdamOn on) {
  ChipTrainerOptions o;
  o.batch = kBatch;
  o.adam_on = on;
  return ChipTrainer(graph::zoo_spec("mlp"), config(), o);
}

void batch(uint64_t seed, std::vector<float>& x, std::vector<int32_t>& y) {
  SplitMix64 rng(seed);
  x.resize(static_cast<size_t>(kBatch) * 784);
  for (float& p : x) p = static_cast<float>(rng.next() % 256) / 255.0f;
  y.clear();
  for (int i = 0; i < kBatch; ++i) y.push_back(static_cast<int32_t>(rng.next() % 10));
}

using chip_test::differing_words;

TEST(AdamUnitTraining, UnitAndVectorUnitGiveBitIdenticalWeightsOver20MlpSteps) {
  ChipTrainer unit = trainer(compiler::AdamOn::kUnit), vec = trainer(compiler::AdamOn::kVectorUnit);
  std::vector<float> x;
  std::vector<int32_t> y;
  for (int s = 0; s < 20; ++s) {
    batch(500 + static_cast<uint64_t>(s), x, y);
    const float lu = unit.step(x.data(), y.data(), kBatch),
                lv = vec.step(x.data(), y.data(), kBatch);
    ASSERT_EQ(std::memcmp(&lu, &lv, 4), 0) << "loss of step " << s;
  }
  EXPECT_EQ(differing_words(unit.params(), vec.params()), 0u);
  EXPECT_EQ(differing_words(unit.optimizer_state(), vec.optimizer_state()), 0u);
  EXPECT_EQ(unit.core().machine().adam().t(), 20);
  EXPECT_EQ(unit.core().machine().adam().stats().steps, 20);
  EXPECT_EQ(vec.core().machine().adam().stats().runs, 0);
}

TEST(AdamUnitTraining, OptimizerBytesPerStepAreThetaAndGInThetaOutOnTheUnit) {
  ChipTrainer unit = trainer(compiler::AdamOn::kUnit), vec = trainer(compiler::AdamOn::kVectorUnit);
  std::vector<float> x;
  std::vector<int32_t> y;
  batch(1, x, y);
  unit.step(x.data(), y.data(), kBatch);
  vec.step(x.data(), y.data(), kBatch);
  const OptimizerCost& u = unit.last_optimizer_cost();
  const OptimizerCost& v = vec.last_optimizer_cost();
  EXPECT_EQ(u.steps, 1);
  EXPECT_EQ(u.hbm_write_bytes, 4 * kMlpParams);
  EXPECT_GE(u.hbm_read_bytes, 8 * kMlpParams);
  EXPECT_LT(u.hbm_read_bytes, 8 * kMlpParams + 512);  // + the unit's instructions
  const core::CoreSpec spec = config();
  const int64_t scalars =
      6 * 2 * 4 * spec.sublanes * spec.lanes;  // step, sqrt_bc2 per tensor, one vreg each
  EXPECT_EQ(v.hbm_read_bytes, 16 * kMlpParams + scalars);
  EXPECT_EQ(v.hbm_write_bytes, 12 * kMlpParams);
  EXPECT_GT(u.cycles, 0);
  EXPECT_LT(u.cycles, v.cycles);
  EXPECT_GT(u.energy_uj, 0);
  EXPECT_LT(u.energy_uj, v.energy_uj);
  EXPECT_EQ(unit.optimizer_cost().hbm_bytes(), u.hbm_bytes());
}

}  // namespace
}  // namespace tessera::runtime
