// Running suite rows (suite/run_row.h) on small shapes of the suite's workloads: the simulated
// result matches the chip-numerics host reference bit for bit (run_row throws otherwise), the
// cycles respect the roofline bound, and a row the compiler cannot lower is reported, not run.
#include "suite/run_row.h"

#include <gtest/gtest.h>

#include "core/spec.h"
#include "suite/row_program.h"
#include "suite/suite_json.h"
#include "suite/workload_graph.h"

namespace tessera::suite {
namespace {

core::CoreSpec v2() {
  return core::load_core_spec(std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v2-like.json");
}

// Counts calls; every body takes "one second".
struct CountingClock {
  int calls = 0;
  HostClock clock() {
    return [this](const std::function<void()>& body) {
      body();
      ++calls;
      return 1.0;
    };
  }
};

// `macs`: whether the row multiplies matrices (a layer norm or softmax has no MACs).
void expect_ran(const RowResult& r, bool macs = true) {
  ASSERT_FALSE(r.unsupported) << *r.unsupported;
  EXPECT_GT(r.cycles, 0);
  EXPECT_EQ(r.work.macs > 0, macs);
  EXPECT_GE(static_cast<double>(r.cycles), r.bound.cycles);
  EXPECT_DOUBLE_EQ(r.mxu_utilization, r.bound.mxu / static_cast<double>(r.cycles));
  EXPECT_GE(r.sim_hbm_bytes, r.work.hbm_bytes);  // every input read and the result written
  EXPECT_EQ(r.check, "bit-exact vs the host reference executor in chip numerics");
}

TEST(SuiteRun, RaggedGemmMatchesTheChipReferenceWithinItsBound) {
  CountingClock c;
  const RowResult r = run_row(parse_row("gemm_200"), v2(), 7, c.clock());
  expect_ran(r);
  EXPECT_EQ(r.work.macs, 200 * 200 * 200);
  EXPECT_EQ(c.calls, 3);  // setup, the simulation, the fp32 reference's second run
  EXPECT_EQ(r.host_seconds, 1.0);
  EXPECT_EQ(r.ref_host_seconds, 1.0);
}

TEST(SuiteRun, StridedPaddedConvMatchesTheChipReferenceWithinItsBound) {
  CountingClock c;
  expect_ran(run_row(parse_row("conv_2x9x9x5x7x3x2x1"), v2(), 7, c.clock()));
  expect_ran(run_row(parse_row("conv_1x6x6x130x3x1x1x0"), v2(), 8, c.clock()));
}

TEST(SuiteRun, RaggedLayerNormMatchesTheChipReferenceWithinItsBound) {
  CountingClock c;
  const RowResult r = run_row(parse_row("layernorm_20x200"), v2(), 7, c.clock());
  expect_ran(r, false);
  EXPECT_EQ(r.work.vector_ops, 7 * 20 * 200 + 4 * 20);
  EXPECT_EQ(r.work.hbm_bytes, 4 * (20 * 200 + 2 * 200 + 20 * 200));  // x, gain, bias; y
  EXPECT_EQ(r.bound.by, core::Roof::kHbm);
  EXPECT_EQ(c.calls, 3);
}

TEST(SuiteRun, RaggedSoftmaxMatchesTheChipReferenceWithinItsBound) {
  CountingClock c;
  const RowResult r = run_row(parse_row("softmax_20x300"), v2(), 7, c.clock());
  expect_ran(r, false);
  EXPECT_EQ(r.work.vector_ops, 5 * 20 * 300 + 20);
  EXPECT_EQ(r.work.hbm_bytes, 4 * 2 * 20 * 300);
}

TEST(SuiteRun, AttentionMatchesTheChipReferenceWithinItsBound) {
  CountingClock c;
  const RowResult r = run_row(parse_row("attention_2x40x16"), v2(), 7, c.clock());
  expect_ran(r);
  EXPECT_EQ(r.work.macs, 2 * (40 * 40 * 16 + 16 * 40 * 40));             // scores, then v^T p
  EXPECT_EQ(r.work.vector_ops, 2 * 40 * 40 + 5 * 2 * 40 * 40 + 2 * 40);  // scale, softmax
  EXPECT_EQ(r.work.hbm_bytes, 4 * (3 * 2 * 40 * 16 + 2 * 16 * 40));
}

TEST(SuiteRun, ABertBlockOfOneHeadMatchesTheChipReferenceWithinItsBound) {
  CountingClock c;
  const RowResult r = run_row(parse_row("bert_64"), v2(), 7, c.clock());
  expect_ran(r);
  const int64_t s = 512, d = 64;
  EXPECT_EQ(r.work.macs, s * d * d * 4 + 2 * s * s * d + 2 * s * d * 4 * d);
}

// A ResNet row is the zoo model at batch 1 with batch normalisation folded: its weights are
// graph constants, written to HBM with the input and counted in the bound's bytes.
TEST(SuiteRun, SmallResNetsMatchTheChipReferenceWithinTheirBound) {
  for (const char* name : {"resnet18x32x4", "resnet50x32x4"}) {
    SCOPED_TRACE(name);
    CountingClock c;
    const RowResult r = run_row(parse_row(name), v2(), 7, c.clock());
    expect_ran(r);
    const graph::Graph g = row_graph(parse_row(name));
    ASSERT_EQ(g.inputs().size(), 1u);
    int64_t weights = 0;
    for (int v : g.constants()) weights += graph::num_elements(g.value(v).shape);
    EXPECT_EQ(r.work.hbm_bytes, 4 * (32 * 32 * 3 + weights + 1000));
  }
}

// A ResNet whose program does not fit instruction memory (resnet50 on tpu-v2-like and
// tpu-v3-like: about 95,000 bundles against 65,536) is reported with both sizes, not run.
TEST(SuiteRun, AResNetLargerThanInstructionMemoryIsReportedWithTheSizes_bad) {
  core::CoreSpec s = v2();
  s.imem_bundles = 256;
  CountingClock c;
  const RowResult r = run_row(parse_row("resnet18x32x4"), s, 1, c.clock());
  ASSERT_TRUE(r.unsupported);
  EXPECT_NE(r.unsupported->find("instruction memory holds 256"), std::string::npos)
      << *r.unsupported;
  EXPECT_EQ(r.cycles, 0);
  EXPECT_EQ(c.calls, 0);
}

// A row run as it is and with instruction memory cut to `share` of its one-level program.
struct NestedRun {
  int64_t one_level = 0, nested = 0, imem = 0;  // bundles
  RowResult straight, rolled;
};

NestedRun run_nested(const char* name, double share) {
  const Row row = parse_row(name);
  const core::CoreSpec big = v2();
  NestedRun r;
  r.one_level = static_cast<int64_t>(row_program(row_graph(row), big).program.code.size());
  core::CoreSpec small = big;
  small.imem_bundles = r.imem = static_cast<int64_t>(static_cast<double>(r.one_level) * share);
  r.nested = static_cast<int64_t>(row_program(row_graph(row), small).program.code.size());
  CountingClock c;
  r.straight = run_row(row, big, 7, c.clock());
  r.rolled = run_row(row, small, 7, c.clock());
  return r;
}

// A program whose one-level rolling does not fit instruction memory is lowered with nested
// rolling (loops inside loops): it fits, runs and stays bit-exact, within 3% of the one-level
// program's cycles (taken branches and loop setup).
TEST(SuiteRun, ARowLargerThanInstructionMemoryRunsWithNestedLoops) {
  for (const char* name : {"softmax_128x8192", "layernorm_128x8192"}) {
    const NestedRun r = run_nested(name, 0.25);
    EXPECT_LE(r.nested, r.imem) << name;
    expect_ran(r.rolled, false);
    EXPECT_LE(static_cast<double>(r.rolled.cycles), 1.03 * static_cast<double>(r.straight.cycles))
        << name << ": " << r.one_level << " -> " << r.nested << " bundles";
  }
}

// A BERT block whose one-level program does not fit: its GEMMs get the regular schedule and
// every kernel is rolled nested; bit-exact, and its cycles close to the one-level program's.
TEST(SuiteRun, ABertBlockLargerThanInstructionMemoryRunsWithNestedLoops) {
  const NestedRun r = run_nested("bert_128", 2.0 / 3.0);
  EXPECT_LE(r.nested, r.imem);
  expect_ran(r.rolled);
  EXPECT_LE(static_cast<double>(r.rolled.cycles), 1.05 * static_cast<double>(r.straight.cycles))
      << r.one_level << " -> " << r.nested << " bundles, " << r.straight.cycles << " -> "
      << r.rolled.cycles << " cycles";
}

TEST(SuiteRun, ARowWhoseRowsDoNotFitVectorMemoryIsReportedWithTheSizes_bad) {
  core::CoreSpec s = v2();
  s.vmem_bytes = 64 * 1024;  // 16 rows of 8 x 128 words
  CountingClock c;
  const RowResult r = run_row(parse_row("softmax_8x4096"), s, 1, c.clock());
  ASSERT_TRUE(r.unsupported);
  EXPECT_NE(r.unsupported->find("8 rows of 4096 elements"), std::string::npos) << *r.unsupported;
  EXPECT_NE(r.unsupported->find("do not fit vector memory"), std::string::npos) << *r.unsupported;
  EXPECT_EQ(r.cycles, 0);
}

TEST(SuiteRun, SimulatedFiguresDoNotDependOnTheHostClock) {
  CountingClock c;
  const RowResult a = run_row(parse_row("gemm_64"), v2(), 1, c.clock());
  const RowResult b = run_row(parse_row("gemm_64"), v2(), 1, c.clock());
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_EQ(a.sim_hbm_bytes, b.sim_hbm_bytes);
  EXPECT_EQ(a.stalls, b.stalls);
}

TEST(SuiteRun, RowsTheCompilerCannotLowerAreReportedWithTheReason) {
  CountingClock c;
  for (const char* name : {"bert_100"}) {
    const RowResult r = run_row(parse_row(name), v2(), 1, c.clock());
    ASSERT_TRUE(r.unsupported) << name;
    EXPECT_FALSE(r.unsupported->empty());
    const nlohmann::ordered_json j = row_json(r);
    EXPECT_EQ(j.size(), 3u) << j.dump();
    EXPECT_EQ(j.at("name"), name);
    EXPECT_EQ(j.at("supported"), false);
    EXPECT_EQ(j.at("reason"), *r.unsupported);
  }
  EXPECT_EQ(c.calls, 0);
}

TEST(SuiteRun, ARowWhoseTensorsExceedTheCoresHbmIsReportedWithTheSizes_bad) {
  core::CoreSpec s = v2();
  s.hbm_bytes = 64 * 1024;  // gemm_128: three 64 KiB matrices
  CountingClock c;
  const RowResult r = run_row(parse_row("gemm_128"), s, 1, c.clock());
  ASSERT_TRUE(r.unsupported);
  EXPECT_NE(r.unsupported->find("need 196608 bytes of HBM; the core has 65536"), std::string::npos)
      << *r.unsupported;
  EXPECT_EQ(r.cycles, 0);
}

TEST(SuiteRun, RowJsonHasEveryFigureOfARowThatRan) {
  CountingClock c;
  const RowResult r = run_row(parse_row("gemm_64"), v2(), 1, c.clock());
  const nlohmann::ordered_json j = row_json(r);
  for (const char* key :
       {"name", "supported", "cycles", "bound_cycles", "bound_by", "cycles_over_bound",
        "mxu_utilization", "macs", "hbm_bytes", "vector_ops", "bound", "sim_hbm_bytes", "stalls",
        "host_seconds", "host_setup_seconds", "ref_host_seconds", "check"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j.at("supported"), true);
  EXPECT_EQ(j.at("cycles"), r.cycles);
  EXPECT_DOUBLE_EQ(j.at("cycles_over_bound").get<double>(),
                   static_cast<double>(r.cycles) / r.bound.cycles);
  EXPECT_EQ(j.at("bound_by"), core::to_string(r.bound.by));
}

TEST(SuiteRun, RowJsonOfARowKernelCarriesItsVectorWork) {
  CountingClock c;
  const RowResult r = run_row(parse_row("softmax_16x256"), v2(), 1, c.clock());
  const nlohmann::ordered_json j = row_json(r);
  EXPECT_EQ(j.at("supported"), true);
  EXPECT_EQ(j.at("macs"), 0);
  EXPECT_EQ(j.at("vector_ops"), 5 * 16 * 256 + 16);
  EXPECT_EQ(j.at("hbm_bytes"), 2 * 16 * 256 * 4);
  EXPECT_DOUBLE_EQ(j.at("bound").at("vector").get<double>(), (5.0 * 16 * 256 + 16) / (8 * 128));
  EXPECT_EQ(j.at("mxu_utilization"), 0.0);
  EXPECT_EQ(j.at("check"), "bit-exact vs the host reference executor in chip numerics");
}

}  // namespace
}  // namespace tessera::suite
