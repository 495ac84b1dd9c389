#include <bit>

#include <gtest/gtest.h>

#include "adam_test_util.h"
#include "cli/bench/adam_unit_session.h"
#include "common/error.h"
#include "compiler/adam_programs.h"
#include "core/core.h"
#include "core/fault.h"
#include "core/functional.h"
#include "isa/adam_isa.h"
#include "isa/assembler.h"
#include "numerics/adam.h"

namespace tessera::core {
namespace {

using compiler::adam_layout;
using compiler::adam_program_segment;
using compiler::adam_unit_init_program;
using compiler::adam_unit_step_program;
using compiler::AdamLayout;

using adam_test::random_vector;
using adam_test::same_bits;
using adam_test::small_spec;
using bench::AdamUnitSession;

struct Reference {
  std::vector<float> theta, m, v;
  int64_t t = 0;
  void step(const std::vector<float>& g, const AdamHyper& h) {
    numerics::adamw_reference_step(theta.data(), m.data(), v.data(), g.data(),
                                   static_cast<long>(theta.size()), h.lr, h.b1, h.b2, h.eps,
                                   h.weight_decay, ++t);
  }
};

void expect_unit_matches(const AdamUnitSession& s, const Reference& r) {
  EXPECT_TRUE(same_bits(s.theta(), r.theta));
  std::vector<float> m, v;
  for (int64_t i = 0; i < s.layout().n; ++i) {
    m.push_back(s.unit().m_at(s.hbm(), i));
    v.push_back(s.unit().v_at(s.hbm(), i));
  }
  EXPECT_TRUE(same_bits(m, r.m));
  EXPECT_TRUE(same_bits(v, r.v));
}

void run_steps_against_reference(const CoreSpec& spec, int64_t n, const AdamHyper& h, int steps) {
  std::mt19937 rng(5);
  Reference ref{random_vector(rng, n, 1.0f), std::vector<float>(n, 0.0f),
                std::vector<float>(n, 0.0f)};
  AdamUnitSession unit(spec, n, h);
  unit.set_theta(ref.theta);
  for (int k = 0; k < steps; ++k) {
    const auto g = random_vector(rng, n, k % 5 == 0 ? 1e-4f : 0.3f);
    unit.step(g);
    ref.step(g, h);
  }
  EXPECT_EQ(unit.unit().t(), steps);
  expect_unit_matches(unit, ref);
}

TEST(AdamUnit, BitIdenticalToTheReferenceOver1000Steps) {
  run_steps_against_reference(small_spec(64), 300, AdamHyper{}, 1000);
}

TEST(AdamUnit, AdamWBitIdenticalToTheReference) {
  AdamHyper h;
  h.lr = 3e-3, h.b1 = 0.8, h.b2 = 0.99, h.eps = 1e-6, h.weight_decay = 0.05;
  run_steps_against_reference(small_spec(32), 100, h, 200);
}

TEST(AdamUnit, ValuesDoNotDependOnBlockSizeWidthsOrBuffers) {
  CoreSpec a = small_spec(7), b = small_spec(4096);
  b.adam.div.width = 3, b.adam.buffers = 5, b.adam.mul.latency = 40;
  AdamUnitSession ua(a, 100, AdamHyper{}), ub(b, 100, AdamHyper{});
  std::mt19937 rng(2);
  const auto theta = random_vector(rng, 100, 1.0f);
  ua.set_theta(theta), ub.set_theta(theta);
  for (int k = 0; k < 10; ++k) {
    const auto g = random_vector(rng, 100, 1.0f);
    ua.step(g), ub.step(g);
  }
  EXPECT_TRUE(same_bits(ua.theta(), ub.theta()));
  EXPECT_NE(ua.cycles(), ub.cycles());
}

TEST(AdamUnit, SpillsBlocksThroughHbmWhenMAndVExceedTheDataCache) {
  const int64_t n = 1000, block = 100;
  CoreSpec fits = small_spec(block, 8 * n),
           spills = small_spec(block, 8 * 300);  // 3 of 10 blocks resident
  AdamUnitSession a(fits, n, AdamHyper{}), b(spills, n, AdamHyper{});
  std::mt19937 rng(3);
  const auto theta = random_vector(rng, n, 1.0f);
  a.set_theta(theta), b.set_theta(theta);
  const int steps = 5;
  Reference ref{theta, std::vector<float>(n, 0.0f), std::vector<float>(n, 0.0f)};
  for (int k = 0; k < steps; ++k) {
    const auto g = random_vector(rng, n, 1.0f);
    a.step(g), b.step(g), ref.step(g, AdamHyper{});
  }
  expect_unit_matches(b, ref);
  EXPECT_EQ(b.unit().resident_blocks(), 3);
  const AdamUnitStats& sa = a.unit().stats();
  const AdamUnitStats& sb = b.unit().stats();
  EXPECT_EQ(sa.spill_in_bytes + sa.spill_out_bytes, 0);
  const int64_t spilled = n - 300;
  EXPECT_EQ(sb.spill_in_bytes, steps * 8 * spilled);
  EXPECT_EQ(sb.spill_out_bytes, (steps + 1) * 8 * spilled);  // + ASSIGN zeroing the spill area
  EXPECT_EQ(sb.dcache_read_bytes, steps * 8 * 300);
  EXPECT_EQ(sa.theta_in_bytes, sb.theta_in_bytes);
  EXPECT_EQ(sa.g_in_bytes, steps * 4 * n);
  EXPECT_EQ(sa.theta_out_bytes, steps * 4 * n);
  EXPECT_GT(b.cycles(), a.cycles());
}

TEST(AdamUnit, MovesOnlyThetaAndGAcrossHbmWhenResident) {
  const int64_t n = 5000;
  AdamUnitSession s(small_spec(1024), n, AdamHyper{});
  const int64_t before = s.unit().stats().hbm_read_bytes() + s.unit().stats().hbm_write_bytes();
  s.step(std::vector<float>(n, 0.5f));
  const AdamUnitStats& st = s.unit().stats();
  const int64_t program = 8 * static_cast<int64_t>(adam_unit_step_program(s.layout()).size()) + 8;
  EXPECT_EQ(st.hbm_read_bytes() + st.hbm_write_bytes() - before, 12 * n + program);
}

TEST(AdamUnit, StepTimeIsBoundByTheHbmPathForLargeBlocksCounts) {
  // 64 blocks streamed: the step takes at least the bytes over the bandwidth and, with the
  // buffers overlapping DMA and compute, not much more than that plus one block's pipeline.
  CoreSpec spec = small_spec(2048, 1 << 24);
  spec.adam.buffers = 16;
  const int64_t n = 64 * 2048;
  AdamUnitSession s(spec, n, AdamHyper{});
  const int64_t c0 = s.cycles();
  s.step(std::vector<float>(n, 0.25f));
  const double bytes = 12.0 * static_cast<double>(n);
  const double floor = bytes / spec.adam.dma_bytes_per_cycle;
  const auto step = static_cast<double>(s.cycles() - c0);
  EXPECT_GE(step, floor);
  EXPECT_LT(step, floor * 1.15 + 3 * spec.adam.dma_latency + 2000);
}

TEST(AdamUnit, TensorCoreStartsTheUnitAndWaitsOnItsFlag) {
  const CoreSpec spec = small_spec(64);
  const int64_t n = 200;
  const AdamLayout l = adam_layout(n, 4096);
  std::mt19937 rng(9);
  const auto theta = random_vector(rng, n, 1.0f), g = random_vector(rng, n, 1.0f);
  isa::Program p = isa::assemble(fmt::format(
      "sli s1, {}\nsli s2, {}\nadam.start s1, 2\nwait 2, 1\nadam.start s2, 3\nwait 3, 1\nhalt\n",
      l.program, l.program + 256));
  const auto words = adam_hyper_words(AdamHyper{});
  p.data.push_back({isa::Space::Hbm, static_cast<uint64_t>(l.hyper),
                    std::vector<uint32_t>(words.begin(), words.end())});
  p.data.push_back(adam_program_segment(adam_unit_init_program(l), l.program));
  p.data.push_back(adam_program_segment(adam_unit_step_program(l), l.program + 256));
  p.data.push_back({isa::Space::Hbm, static_cast<uint64_t>(l.theta), std::vector<uint32_t>(n)});
  p.data.push_back({isa::Space::Hbm, static_cast<uint64_t>(l.g), std::vector<uint32_t>(n)});
  std::memcpy(p.data[3].words.data(), theta.data(), 4 * n);
  std::memcpy(p.data[4].words.data(), g.data(), 4 * n);

  FunctionalCore f(spec, p);
  f.run();
  Core c(spec, p);
  c.run();
  EXPECT_EQ(diff_architectural_state(f.state(), c.state()), "");
  Reference ref{theta, std::vector<float>(n, 0.0f), std::vector<float>(n, 0.0f)};
  ref.step(g, AdamHyper{});
  std::vector<float> out(n);
  c.state().hbm.read_block(l.theta, reinterpret_cast<uint32_t*>(out.data()), n);
  EXPECT_TRUE(same_bits(out, ref.theta));
  EXPECT_GE(c.cycles(), c.machine().adam().busy_until());
  EXPECT_GT(c.stall_cycles(StallCause::SyncWait), spec.adam.dma_latency);
  EXPECT_EQ(c.machine().adam().stats().runs, 2);
}

TEST(AdamUnit, StandaloneSolveStopsWhenTheConvergenceTestFires) {
  // f(x) = 0.5 * sum x^2: g = theta.
  AdamHyper h;
  h.lr = 0.05, h.ct = 1e-4, h.max_iters = 100000;
  AdamUnitSession s(small_spec(16), 40, h);
  std::mt19937 rng(4);
  s.set_theta(random_vector(rng, 40, 1.0f));
  std::vector<float> last_prev;
  const int64_t it = s.solve([&](const std::vector<float>& th, int64_t) { return th; });
  EXPECT_GT(it, 10);
  EXPECT_LT(it, 100000);
  EXPECT_TRUE(s.unit().converged());
  EXPECT_LT(s.unit().temp2(), static_cast<float>(h.ct));
}

TEST(AdamUnit, SolveStopsAtMaxIters) {
  AdamHyper h;
  h.ct = 0, h.max_iters = 7;
  AdamUnitSession s(small_spec(16), 10, h);
  EXPECT_EQ(s.solve([](const std::vector<float>& th, int64_t) { return th; }), 7);
  EXPECT_FALSE(s.unit().converged());
}

}  // namespace
}  // namespace tessera::core
