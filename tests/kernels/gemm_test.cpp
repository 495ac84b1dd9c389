// The generated GEMM program: bit-exact results on both interpreters, and its MXU timing.
#include "kernels/gemm.h"

#include <bit>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.h"
#include "core/core.h"
#include "core/functional.h"
#include "isa/assembler.h"
#include "isa/disassembler.h"
#include "numerics/bf16.h"
#include "numerics/matmul.h"

namespace tessera::kernels {
namespace {

core::CoreSpec small_spec(bool double_buffer) {
  core::CoreSpec s = core::load_core_spec(std::string(TESSERA_SOURCE_DIR) + "/configs/small.json");
  s.mxu_double_buffer = double_buffer;
  return s;
}

struct Operands {
  std::vector<float> a, b, expected;
};

Operands make_operands(int M, int K, int N, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  Operands o{std::vector<float>(static_cast<size_t>(M) * K),
             std::vector<float>(static_cast<size_t>(K) * N),
             {}};
  for (float& x : o.a) x = dist(rng);
  for (float& x : o.b) x = dist(rng);
  std::vector<float> ar(o.a), br(o.b);
  for (float& x : ar) x = numerics::round_to_bf16(x);
  for (float& x : br) x = numerics::round_to_bf16(x);
  o.expected.assign(static_cast<size_t>(M) * N, 0.0f);
  numerics::mxu_matmul_accumulate(ar.data(), K, br.data(), N, o.expected.data(), N, M, K, N);
  return o;
}

::testing::AssertionResult bitwise_equal(const std::vector<float>& x, const std::vector<float>& y) {
  if (x.size() != y.size()) return ::testing::AssertionFailure() << "sizes differ";
  for (size_t i = 0; i < x.size(); ++i)
    if (std::bit_cast<uint32_t>(x[i]) != std::bit_cast<uint32_t>(y[i]))
      return ::testing::AssertionFailure() << "element " << i << ": " << x[i] << " vs " << y[i];
  return ::testing::AssertionSuccess();
}

struct Shape {
  int M, K, N;
  std::string name() const {
    return "M=" + std::to_string(M) + " K=" + std::to_string(K) + " N=" + std::to_string(N);
  }
};

// Full tiles, ragged K / N / M, one K tile (plain mmul), many K tiles (accumulator chain), M
// below the array's latency, and shapes that need several M chunks (small config: 64 blocks).
const std::vector<Shape> kShapes = {{8, 8, 8},  {16, 16, 16}, {5, 3, 7},
                                    {2, 24, 8}, {30, 20, 13}, {64, 40, 24},
                                    {7, 9, 17}, {160, 24, 9}, {300, 17, 20}};

TEST(Gemm, ResultIsBitIdenticalToTheMxuContractOnBothInterpreters) {
  uint32_t seed = 1;
  for (const Shape& s : kShapes)
    for (bool db : {true, false}) {
      SCOPED_TRACE(s.name() + (db ? " double-buffered" : " single-buffered"));
      const core::CoreSpec spec = small_spec(db);
      GemmProgram g = make_gemm(spec, s.M, s.K, s.N);
      const Operands o = make_operands(s.M, s.K, s.N, seed++);
      add_gemm_operands(g.program, g.plan, o.a.data(), o.b.data());

      core::Core timed(spec, g.program);
      timed.run();
      EXPECT_TRUE(bitwise_equal(read_gemm_result(timed.state(), g.plan), o.expected));

      core::FunctionalCore functional(spec, g.program);
      functional.run();
      EXPECT_TRUE(bitwise_equal(read_gemm_result(functional.state(), g.plan), o.expected));
    }
}

// Several MXUs: N tiles spread over them (a ragged last group leaves some idle), each output
// computed by one MXU's chain, so the values are the one-MXU values bit for bit.
TEST(Gemm, SeveralMxusGiveTheOneMxuValuesBitForBit) {
  uint32_t seed = 100;
  for (const Shape& s : kShapes)
    for (int mxus : {2, 3}) {
      SCOPED_TRACE(s.name() + " MXUs=" + std::to_string(mxus));
      const Operands o = make_operands(s.M, s.K, s.N, seed++);
      core::CoreSpec one = small_spec(true);
      GemmProgram g1 = make_gemm(one, s.M, s.K, s.N);
      add_gemm_operands(g1.program, g1.plan, o.a.data(), o.b.data());
      core::Core c1(one, g1.program);
      c1.run();
      const std::vector<float> r1 = read_gemm_result(c1.state(), g1.plan);

      core::CoreSpec many = small_spec(true);
      many.mxu_count = mxus;
      GemmProgram g = make_gemm(many, s.M, s.K, s.N);
      EXPECT_EQ(g.plan.units, mxus);
      add_gemm_operands(g.program, g.plan, o.a.data(), o.b.data());
      core::Core timed(many, g.program);
      timed.run();
      EXPECT_TRUE(bitwise_equal(read_gemm_result(timed.state(), g.plan), r1));
      EXPECT_TRUE(bitwise_equal(r1, o.expected));
      core::FunctionalCore functional(many, g.program);
      functional.run();
      EXPECT_TRUE(bitwise_equal(read_gemm_result(functional.state(), g.plan), r1));
      // every weight tile went to some MXU, and MXU u > 0 got work whenever N has a tile for it
      const core::MxuStats total = timed.machine().mxu_stats();
      EXPECT_EQ(total.tiles_loaded, g.plan.tiles);
      EXPECT_EQ(total.macs, c1.machine().mxu_stats().macs);
      for (int u = 1; u < mxus; ++u)
        EXPECT_EQ(timed.machine().mxu(u).stats().tiles_loaded > 0, g.plan.NT > u) << u;
    }
}

// Holds whenever the DMA engine keeps up; the small config's 4-deep DMA queue does not for the
// multi-chunk shapes (a full queue stalls the issuing bundle), so this uses a 16-deep queue. The
// straight-line code meets the formula exactly; its loop-rolled form pays the taken branches
// where the MXU waits for issue (2 bundles per push, a push taking S = 2 cycles here): at most
// one cycle per trip of a body of >= 64 bundles, so within 1/32 of the formula.
TEST(Gemm, SingleBufferedMxuSpanEqualsThePublishedFormula) {
  for (const Shape& s : kShapes)
    for (bool loops : {false, true}) {
      SCOPED_TRACE(s.name() + (loops ? " rolled" : " straight"));
      core::CoreSpec spec = small_spec(false);
      spec.dma_queue = 16;
      GemmProgram g = make_gemm(spec, s.M, s.K, s.N, loops);
      const Operands o = make_operands(s.M, s.K, s.N, 3);
      add_gemm_operands(g.program, g.plan, o.a.data(), o.b.data());
      core::Core timed(spec, g.program);
      timed.run();
      if (!loops) {
        EXPECT_EQ(timed.machine().mxu().stats().span(), g.plan.formula_cycles);
      }
      EXPECT_GE(timed.machine().mxu().stats().span(), g.plan.formula_cycles);
      EXPECT_LE(timed.machine().mxu().stats().span(),
                g.plan.formula_cycles + g.plan.formula_cycles / 32);
    }
}

TEST(Gemm, DoubleBufferedMxuStaysBusyForLargeM) {
  const core::CoreSpec spec = small_spec(true);
  GemmProgram g = make_gemm(spec, 128, 64, 32);
  const Operands o = make_operands(128, 64, 32, 4);
  add_gemm_operands(g.program, g.plan, o.a.data(), o.b.data());
  core::Core timed(spec, g.program);
  timed.run();
  const core::MxuStats& st = timed.machine().mxu().stats();
  EXPECT_LT(st.span(), g.plan.formula_cycles);
  EXPECT_EQ(st.busy_cycles, g.plan.tiles * 128);
  EXPECT_GT(static_cast<double>(st.busy_cycles) / static_cast<double>(st.span()), 0.9);
}

// A core of two 128 x 128 MXUs with 8 sublanes (tpu-v2-like's core with tpu-v3-like's MXU count): a
// push pair takes 8 cycles, its 4 bundles issue in fewer, so after the first tiles both arrays
// stream rows back to back.
TEST(Gemm, TwoFullSizeMxusStayBusyForLargeM) {
  core::CoreSpec spec =
      core::load_core_spec(std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json");
  spec.mxu_count = 2;
  GemmProgram g = make_gemm(spec, 1024, 512, 256);
  const Operands o = make_operands(1024, 512, 256, 5);
  add_gemm_operands(g.program, g.plan, o.a.data(), o.b.data());
  core::Core timed(spec, g.program);
  timed.run();
  EXPECT_TRUE(bitwise_equal(read_gemm_result(timed.state(), g.plan), o.expected));
  const core::MxuStats st = timed.machine().mxu_stats();
  for (int u = 0; u < 2; ++u) EXPECT_EQ(timed.machine().mxu(u).stats().busy_cycles, 4 * 128 * 8);
  EXPECT_GT(static_cast<double>(st.busy_cycles) / (2.0 * static_cast<double>(st.span())), 0.9);
  // and its text (with mxu1 operands) reassembles to the same code
  EXPECT_EQ(isa::assemble(isa::disassemble(g.program)).code, g.program.code);
}

// The regular schedule (`nested`: the code a program that does not fit instruction memory gets)
// computes the values of the default schedule bit for bit, straight and rolled with nested loops,
// on both interpreters, with one and two MXUs; its rolled code pays taken branches and loop setup
// but keeps the weight prefetch, so its cycles stay close to the one-level program's.
TEST(Gemm, RegularScheduleGivesTheDefaultValuesBitForBit) {
  uint32_t seed = 200;
  for (const Shape& s : kShapes)
    for (int mxus : {1, 2}) {
      SCOPED_TRACE(s.name() + " MXUs=" + std::to_string(mxus));
      core::CoreSpec spec = small_spec(true);
      spec.mxu_count = mxus;
      const Operands o = make_operands(s.M, s.K, s.N, seed++);
      GemmPlacement at;
      at.b_hbm = static_cast<int64_t>(s.M) * s.K;
      at.c_hbm = at.b_hbm + static_cast<int64_t>(s.K) * s.N;
      GemmProgram one_level = make_gemm(spec, s.M, s.K, s.N, at);
      add_gemm_operands(one_level.program, one_level.plan, o.a.data(), o.b.data());
      core::Core reference(spec, one_level.program);
      reference.run();
      for (const bool loops : {false, true}) {
        GemmProgram g = make_gemm(spec, s.M, s.K, s.N, at, loops, true);
        add_gemm_operands(g.program, g.plan, o.a.data(), o.b.data());
        core::Core timed(spec, g.program);
        timed.run();
        EXPECT_TRUE(bitwise_equal(read_gemm_result(timed.state(), g.plan), o.expected)) << loops;
        core::FunctionalCore functional(spec, g.program);
        functional.run();
        EXPECT_TRUE(bitwise_equal(read_gemm_result(functional.state(), g.plan), o.expected))
            << loops;
        EXPECT_EQ(timed.machine().mxu_stats().macs, reference.machine().mxu_stats().macs);
        if (loops) {
          EXPECT_LE(static_cast<double>(timed.cycles()),
                    1.1 * static_cast<double>(reference.cycles()) + 64)
              << g.program.code.size() << " bundles, one level " << one_level.program.code.size();
        }
      }
    }
}

// With many weight tiles the regular schedule's groups of N tiles repeat, so nested rolling folds
// the K steps and the groups: the code is under half the one-level program's (a third with one
// MXU). A GEMM whose one-level code does not fit instruction memory gets it without being asked.
TEST(Gemm, RegularScheduleFoldsTheWeightTilesIntoNestedLoops) {
  for (int mxus : {1, 2}) {
    core::CoreSpec spec = small_spec(true);
    spec.mxu_count = mxus;
    spec.imem_bundles = 1 << 20;
    const int M = 64, K = 128, N = 256;  // 16 K steps of 32 pushes in 32 / mxus groups
    const GemmProgram one_level = make_gemm(spec, M, K, N);
    GemmPlacement at;
    at.b_hbm = static_cast<int64_t>(M) * K;
    at.c_hbm = at.b_hbm + static_cast<int64_t>(K) * N;
    const GemmProgram regular = make_gemm(spec, M, K, N, at, true, true);
    SCOPED_TRACE(std::to_string(mxus) + " MXUs: " + std::to_string(one_level.program.code.size()) +
                 " -> " + std::to_string(regular.program.code.size()) + " bundles");
    EXPECT_LT(regular.program.code.size() * 2, one_level.program.code.size());
    spec.imem_bundles = static_cast<int64_t>(one_level.program.code.size()) - 1;
    EXPECT_EQ(make_gemm(spec, M, K, N).program.code, regular.program.code);
  }
}

// K so large that not even an S-row A panel fits vector memory (2048 rows here): the panel streams
// through a ring, K step by K step, and the values are still the MXU contract's on both
// interpreters, for one and two MXUs, ragged K / N / M, several M chunks and groups of N tiles, and
// for both schedules. The rolled code stays small: its size does not grow with K.
TEST(Gemm, PanelTooLargeForVectorMemoryStreamsThroughARing) {
  struct Case {
    Shape shape;
    int mxus;
  };
  uint32_t seed = 300;
  for (const Case& c : {Case{{8, 8000, 8}, 1}, Case{{150, 4003, 20}, 2}, Case{{5, 6001, 9}, 1}})
    for (const bool nested : {false, true}) {
      const Shape& s = c.shape;
      SCOPED_TRACE(s.name() + " MXUs=" + std::to_string(c.mxus) + (nested ? " nested" : ""));
      core::CoreSpec spec = small_spec(true);
      spec.mxu_count = c.mxus;
      spec.hbm_bytes = int64_t{64} << 20;
      const Operands o = make_operands(s.M, s.K, s.N, seed++);
      GemmPlacement at;
      at.b_hbm = static_cast<int64_t>(s.M) * s.K;
      at.c_hbm = at.b_hbm + static_cast<int64_t>(s.K) * s.N;
      GemmProgram g = make_gemm(spec, s.M, s.K, s.N, at, true, nested);
      EXPECT_GE(g.plan.panel_ring, 4);
      EXPECT_LE(g.plan.vmem_rows, spec.vmem_rows());
      EXPECT_LT(g.program.code.size(), 4000u) << "K steps: " << g.plan.KT;
      add_gemm_operands(g.program, g.plan, o.a.data(), o.b.data());
      core::Core timed(spec, g.program);
      timed.run();
      EXPECT_TRUE(bitwise_equal(read_gemm_result(timed.state(), g.plan), o.expected));
      // The same GEMM with the whole panel in a larger vector memory: the same MXU work, and the
      // streamed panel's DMAs keep the array about as busy.
      core::CoreSpec roomy = spec;
      roomy.vmem_bytes = 128 * spec.vmem_bytes;
      GemmProgram whole = make_gemm(roomy, s.M, s.K, s.N, at, true, nested);
      EXPECT_EQ(whole.plan.panel_ring, 0);
      EXPECT_EQ(whole.plan.Mb, g.plan.Mb);
      add_gemm_operands(whole.program, whole.plan, o.a.data(), o.b.data());
      core::Core reference(roomy, whole.program);
      reference.run();
      EXPECT_EQ(timed.machine().mxu_stats().macs, reference.machine().mxu_stats().macs);
      EXPECT_LE(static_cast<double>(timed.cycles()), 1.2 * static_cast<double>(reference.cycles()));
      core::FunctionalCore functional(spec, g.program);
      functional.run();
      EXPECT_TRUE(bitwise_equal(read_gemm_result(functional.state(), g.plan), o.expected));
    }
}

TEST(Gemm, AssemblyTextReassemblesToTheSameCode) {
  const core::CoreSpec spec = small_spec(true);
  const GemmProgram g = make_gemm(spec, 20, 20, 20);
  const isa::Program again = isa::assemble(isa::disassemble(g.program));
  EXPECT_EQ(again.code, g.program.code);
  EXPECT_EQ(again.data, g.program.data);
}

TEST(Gemm, ShapeTooLargeForVectorMemoryIsRejected_bad) {
  core::CoreSpec spec = small_spec(true);
  spec.vmem_bytes = int64_t{128} * 4 * spec.lanes;  // 128 rows: a ring would need 132 and more
  try {
    make_gemm(spec, 8, 8000, 8);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "gemm: vector memory (128 rows) cannot hold a 2-row A panel of K = 8000 plus weight "
              "and output buffers");
  }
}

TEST(Gemm, TooFewVectorRegistersForItsMxusIsRejected_bad) {
  core::CoreSpec spec = small_spec(true);
  spec.mxu_count = 8;
  spec.vector_regs = 16;
  try {
    make_gemm(spec, 8, 8, 8);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "gemm: the kernel needs 29 vector registers for 8 MXU(s); the core has 16");
  }
}

}  // namespace
}  // namespace tessera::kernels
