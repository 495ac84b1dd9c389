// Dense Adagrad on the tensor core (compiler/kernels_adagrad.h) against numerics::adagrad_update,
// bit for bit: three steps in place over a tensor that does not fill its last vector register,
// gradients from tiny to large with zeros among them, on two core shapes.
#include <bit>
#include <cmath>

#include <gtest/gtest.h>

#include "common/splitmix64.h"
#include "compiler/kernels_adagrad.h"
#include "core/core.h"
#include "numerics/sparse_optimizer.h"
#include "support/kernel_config.h"

namespace tessera::compiler {
namespace {

constexpr int64_t kTheta = 0, kSum = 1 << 16, kGrad = 2 << 16, kScalars = 3 << 16;

std::vector<uint32_t> words(const std::vector<float>& v) {
  std::vector<uint32_t> w;
  for (float x : v) w.push_back(std::bit_cast<uint32_t>(x));
  return w;
}

std::vector<float> gradient(int64_t n, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<float> g(static_cast<size_t>(n));
  for (float& x : g) {
    const double u = static_cast<double>(rng.next() >> 11) * 0x1.0p-53;
    const int e = static_cast<int>(rng.next() % 40) - 30;  // 2^-30 .. 2^9
    x = rng.next() % 7 == 0 ? 0.0f : static_cast<float>((u - 0.5) * std::ldexp(1.0, e));
  }
  return g;
}

class AdagradKernel : public ::testing::TestWithParam<const char*> {};

TEST_P(AdagradKernel, ThreeStepsMatchNumericsBitForBit) {
  const core::CoreSpec spec = testing::kernel_config(GetParam());
  const int64_t n = 3 * spec.sublanes * spec.lanes + 37;
  const float eps = 1e-10f;
  const double lr = 0.1, lr_decay = 0.01;
  Codegen cg(spec);
  emit_adagrad(cg, "adagrad.p", kTheta, kSum, kGrad, n, eps, kScalars);
  const isa::Program program = cg.finish();
  std::vector<float> theta = gradient(n, 1), sum(static_cast<size_t>(n), 0.0f);
  core::Core chip(spec, program);
  chip.host_state().hbm.write_block(kTheta, words(theta).data(), n);
  for (int t = 1; t <= 3; ++t) {
    const std::vector<float> g = gradient(n, 100 + t);
    const float clr = numerics::adagrad_step_lr(lr, lr_decay, t);
    numerics::adagrad_update(theta.data(), sum.data(), g.data(), n, clr, eps);
    chip.host_state().hbm.write_block(kGrad, words(g).data(), n);
    chip.host_state().hbm.write_block(kScalars, words({clr}).data(), 1);
    chip.load(program);
    chip.run();
    std::vector<uint32_t> got_theta(static_cast<size_t>(n)), got_sum(static_cast<size_t>(n));
    chip.state().hbm.read_block(kTheta, got_theta.data(), n);
    chip.state().hbm.read_block(kSum, got_sum.data(), n);
    ASSERT_EQ(got_theta, words(theta)) << "step " << t;
    ASSERT_EQ(got_sum, words(sum)) << "step " << t;
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, AdagradKernel, ::testing::Values("tpu-v2-like", "small"));

}  // namespace
}  // namespace tessera::compiler
