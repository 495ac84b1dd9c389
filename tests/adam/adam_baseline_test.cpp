// The vector-unit Adam program (compiler::adam_vector_step_program) against numerics/adam.h and the
// unit.
#include <gtest/gtest.h>

#include "adam_test_util.h"
#include "cli/bench/adam_unit_session.h"
#include "compiler/adam_programs.h"
#include "core/core.h"
#include "core/functional.h"
#include "isa/assembler.h"
#include "numerics/adam.h"

namespace tessera::core {
namespace {

using compiler::adam_layout;
using compiler::adam_vector_step_program;
using compiler::AdamLayout;

using adam_test::random_vector;
using adam_test::same_bits;
using bench::AdamUnitSession;

isa::DataSegment floats_at(int64_t addr, const std::vector<float>& x) {
  isa::DataSegment s{isa::Space::Hbm, static_cast<uint64_t>(addr), std::vector<uint32_t>(x.size())};
  std::memcpy(s.words.data(), x.data(), 4 * x.size());
  return s;
}

std::vector<float> floats_from(const ArchState& st, int64_t addr, int64_t n) {
  std::vector<float> x(static_cast<size_t>(n));
  st.hbm.read_block(addr, reinterpret_cast<uint32_t*>(x.data()), n);
  return x;
}

TEST(AdamBaseline, VectorUnitStepsAreBitIdenticalToTheReferenceAndTheUnit) {
  CoreSpec spec;
  spec.hbm_bytes = 64ll << 20;
  const int64_t n = 8192 * 2 + 1000;  // three chunks, the last partial
  const AdamLayout l = adam_layout(n);
  std::mt19937 rng(21);
  auto theta = random_vector(rng, n, 1.0f);
  std::vector<float> m(n, 0.0f), v(n, 0.0f);
  AdamHyper h;
  h.lr = 2e-3;
  AdamUnitSession unit(spec, n, h);
  unit.set_theta(theta);
  for (int64_t t = 1; t <= 3; ++t) {
    const auto g = random_vector(rng, n, t == 2 ? 1e-5f : 1.0f);
    isa::Program p = adam_vector_step_program(spec, l, h, t);
    p.data = {floats_at(l.theta, theta), floats_at(l.g, g), floats_at(l.m, m), floats_at(l.v, v)};
    Core c(spec, p);
    c.run();
    FunctionalCore f(spec, p);
    f.run();
    EXPECT_EQ(diff_architectural_state(f.state(), c.state()), "");
    numerics::adamw_reference_step(theta.data(), m.data(), v.data(), g.data(), n, h.lr, h.b1, h.b2,
                                   h.eps, 0, t);
    EXPECT_TRUE(same_bits(floats_from(c.state(), l.theta, n), theta)) << "t = " << t;
    EXPECT_TRUE(same_bits(floats_from(c.state(), l.m, n), m));
    EXPECT_TRUE(same_bits(floats_from(c.state(), l.v, n), v));
    EXPECT_EQ(c.machine().events().hbm_read_bytes, 16 * n);
    EXPECT_EQ(c.machine().events().hbm_write_bytes, 12 * n);
    unit.step(g);
    EXPECT_TRUE(same_bits(unit.theta(), theta));
  }
}

}  // namespace
}  // namespace tessera::core

#include "cli/bench/adam_step.h"

namespace tessera::core {
namespace {

TEST(AdamBench, TheUnitMovesAboutThreeSeventhsOfTheVectorUnitBytesBitIdentically) {
  CoreSpec spec;
  spec.hbm_bytes = 64ll << 20;
  const bench::AdamBenchRow r = bench::adam_bench_step(spec, 100000);
  EXPECT_TRUE(r.unit_bit_identical);
  EXPECT_TRUE(r.vector_bit_identical);
  EXPECT_EQ(r.vector_unit.bytes, 28 * r.n);
  EXPECT_GT(r.unit.bytes, 12 * r.n);
  EXPECT_LT(r.unit.bytes, 12 * r.n + 1024);  // + the step program's instructions
  EXPECT_NEAR(r.bytes_ratio(), 3.0 / 7.0, 0.001);
  EXPECT_LT(r.cycles_ratio(), 1.0);
  EXPECT_GT(r.unit.cycles, 0);
}

}  // namespace
}  // namespace tessera::core
