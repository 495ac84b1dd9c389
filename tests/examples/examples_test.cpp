// The programs in examples/ assemble, run on the timed core of the default config, and compute
// what host code computes with the same numerics (bit for bit); the functional interpreter
// reaches the same architectural state.
#include <bit>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/core.h"
#include "core/functional.h"
#include "core/spec.h"
#include "isa/assembler.h"
#include "numerics/bf16.h"
#include "numerics/eup.h"
#include "numerics/matmul.h"
#include "numerics/reduce.h"
#include "report/trace.h"

namespace tessera {
namespace {

const std::string kSource = TESSERA_SOURCE_DIR;

struct ExampleRun {
  core::CoreSpec spec;
  isa::Program program;
  std::unique_ptr<core::Core> core;
};

// Assembles examples/<name>.s and runs it to the end on the timed core of tpu-v2-like.json.
std::unique_ptr<ExampleRun> run_example(const std::string& name,
                                        report::TraceSink* trace = nullptr) {
  auto r = std::make_unique<ExampleRun>();
  r->spec = core::load_core_spec(kSource + "/configs/tpu-v2-like.json");
  r->program = isa::assemble_file(kSource + "/examples/" + name + ".s");
  core::TimedOptions options;
  options.trace = trace;
  r->core = std::make_unique<core::Core>(r->spec, r->program, options);
  r->core->run();
  return r;
}

// Keeps the spans of the ops named in `names`.
class SpanRecorder final : public report::TraceSink {
 public:
  struct Span {
    std::string name;
    int64_t start, end;
  };
  void span(std::string_view, std::string_view name, int64_t start, int64_t duration,
            std::string_view) override {
    spans.push_back({std::string(name), start, start + duration});
  }
  void counter(std::string_view, std::string_view, int64_t, double) override {}
  std::vector<Span> named(std::string_view name) const {
    std::vector<Span> out;
    for (const auto& s : spans)
      if (s.name == name) out.push_back(s);
    return out;
  }
  std::vector<Span> spans;
};

// The generator of the examples (see examples/matmul.s): a hash of the element index to [-1, 1).
float generated(uint32_t i) {
  const uint32_t z = i * 0x9E3779B1u;
  const uint32_t x = z ^ (z >> 15);
  const uint32_t y = x * 0x85EBCA6Bu;
  const uint32_t h = y ^ (y >> 13);
  return static_cast<float>(static_cast<int32_t>(h)) * 0x1p-31f;
}

std::vector<float> hbm_floats(const core::ArchState& s, int64_t addr, int64_t n) {
  std::vector<uint32_t> words(static_cast<size_t>(n));
  s.hbm.read_block(addr, words.data(), n);
  std::vector<float> out(static_cast<size_t>(n));
  std::memcpy(out.data(), words.data(), sizeof(float) * out.size());
  return out;
}

std::vector<float> vmem_floats(const core::ArchState& s, int64_t row, int64_t rows, int lanes) {
  std::vector<float> out(static_cast<size_t>(rows * lanes));
  std::memcpy(out.data(), s.vmem.data() + row * lanes, sizeof(float) * out.size());
  return out;
}

// Counts elements whose bit patterns differ; reports the first.
int64_t bit_mismatches(const std::vector<float>& got, const std::vector<float>& want) {
  int64_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::bit_cast<uint32_t>(got[i]) == std::bit_cast<uint32_t>(want[i])) continue;
    if (bad++ == 0)
      ADD_FAILURE() << "first mismatch at element " << i << ": got " << got[i] << ", want "
                    << want[i];
  }
  return bad;
}

void expect_functional_state_matches(const ExampleRun& r) {
  core::FunctionalCore f(r.spec, r.program);
  f.run();
  EXPECT_EQ(core::diff_architectural_state(f.state(), r.core->state()), "");
}

// ---- matmul ------------------------------------------------------------------------------------

constexpr int kM = 512, kK = 384, kN = 256;
constexpr int64_t kAHbm = 0, kBHbm = int64_t{kM} * kK, kCHbm = 393216;

// The timed run of matmul.s, shared by the tests that only read its results (it is the largest).
const ExampleRun& matmul_run() {
  static const std::unique_ptr<ExampleRun> run = run_example("matmul");
  return *run;
}

TEST(Examples, MatmulInputsInHbmAreTheGeneratedValues) {
  const ExampleRun* r = &matmul_run();
  const auto& s = r->core->state();
  const auto a = hbm_floats(s, kAHbm, int64_t{kM} * kK);
  const auto b = hbm_floats(s, kBHbm, int64_t{kK} * kN);
  std::vector<float> want_a(a.size()), want_b(b.size());
  for (size_t i = 0; i < a.size(); ++i) want_a[i] = generated(static_cast<uint32_t>(i));
  for (size_t i = 0; i < b.size(); ++i)
    want_b[i] = generated(static_cast<uint32_t>(kBHbm + static_cast<int64_t>(i)));
  EXPECT_EQ(bit_mismatches(a, want_a), 0);
  EXPECT_EQ(bit_mismatches(b, want_b), 0);
}

TEST(Examples, MatmulIsBitExactWithTheMxuNumericsOverTheWholeK) {
  const ExampleRun* r = &matmul_run();
  const auto& s = r->core->state();
  std::vector<float> a(static_cast<size_t>(kM) * kK), b(static_cast<size_t>(kK) * kN);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = numerics::round_to_bf16(generated(static_cast<uint32_t>(i)));
  for (size_t i = 0; i < b.size(); ++i)
    b[i] =
        numerics::round_to_bf16(generated(static_cast<uint32_t>(kBHbm + static_cast<int64_t>(i))));
  std::vector<float> want(static_cast<size_t>(kM) * kN, 0.0f);
  numerics::mxu_matmul_accumulate(a.data(), kK, b.data(), kN, want.data(), kN, kM, kK, kN);
  const auto got = hbm_floats(s, kCHbm, int64_t{kM} * kN);
  EXPECT_EQ(bit_mismatches(got, want), 0);
  // The data is not degenerate: accumulation order matters for it (a different K order, here
  // descending, changes some results).
  std::vector<float> reversed(want.size(), 0.0f);
  for (int k = kK - 1; k >= 0; --k)
    numerics::mxu_matmul_accumulate(a.data() + k, kK, b.data() + static_cast<size_t>(k) * kN, kN,
                                    reversed.data(), kN, kM, 1, kN);
  int64_t differ = 0;
  for (size_t i = 0; i < want.size(); ++i) differ += want[i] != reversed[i];
  EXPECT_GT(differ, 0);
}

TEST(Examples, MatmulUsesTheMxuAsTiled) {
  const ExampleRun* r = &matmul_run();
  const auto st = r->core->stats();
  EXPECT_EQ(st.get("mxu.macs"), double{kM} * kK * kN);
  EXPECT_EQ(st.get("mxu.tiles_loaded"), (kK / 128) * (kN / 128));
  EXPECT_EQ(st.get("mxu.weight_rows"), double{kK} * (kN / 128));
  // Operands in (A, B), generated data out, C out: every HBM byte moved once.
  EXPECT_EQ(st.get("memory.hbm_read_bytes"), 4.0 * (kM * kK + kK * kN));
  EXPECT_EQ(st.get("memory.hbm_write_bytes"), 4.0 * (kM * kK + kK * kN + kM * kN));
  EXPECT_EQ(st.get("memory.dma_requests"), 1 + 9 + 2);
}

TEST(Examples, MatmulOverlapsOperandDmaAndWeightLoadsWithMultiplies) {
  SpanRecorder rec;
  const auto r = run_example("matmul", &rec);
  const auto dmas = rec.named("dma.hv.2d");
  const auto mmuls = rec.named("mmul.st");
  const auto mlws = rec.named("mlw");
  ASSERT_EQ(dmas.size(), 9u);
  ASSERT_FALSE(mmuls.empty());
  // The first multiply starts before the last operand transfer has finished.
  EXPECT_LT(mmuls.front().start, dmas.back().end);
  // Weight rows shift in while the array multiplies: after the first tile's 16, every mlw
  // starts while some mmul streams its rows, and the 5 later flips together wait for less than
  // one tile's shift-in (128 cycles).
  std::vector<SpanRecorder::Span> multiplies;
  for (const auto& s : rec.spans)
    if (s.name.rfind("mmul", 0) == 0) multiplies.push_back(s);
  ASSERT_EQ(mlws.size(), 16u * 6u);
  for (size_t i = 16; i < mlws.size(); ++i) {
    bool overlapped = false;
    for (const auto& m : multiplies)
      overlapped |= m.start <= mlws[i].start && mlws[i].start < m.end;
    EXPECT_TRUE(overlapped) << "mlw " << i << " at cycle " << mlws[i].start;
  }
  EXPECT_LT(r->core->stall_cycles(core::StallCause::MxuWeights), 128);
}

TEST(Examples, MatmulFunctionalInterpreterAgrees) {
  expect_functional_state_matches(matmul_run());
}

// ---- softmax -----------------------------------------------------------------------------------

TEST(Examples, SoftmaxIsBitExactWithTheReduceAndEupNumerics) {
  const auto r = run_example("softmax");
  const auto& s = r->core->state();
  const int L = r->spec.lanes, rows = 256;
  const auto x = vmem_floats(s, 0, rows, L);
  const auto y = vmem_floats(s, 256, rows, L);
  std::vector<float> want(y.size());
  for (int row = 0; row < rows; ++row) {
    const float* xr = &x[static_cast<size_t>(row) * L];
    for (int c = 0; c < L; ++c)
      ASSERT_EQ(std::bit_cast<uint32_t>(xr[c]),
                std::bit_cast<uint32_t>(generated(static_cast<uint32_t>(row * L + c)) * 8.0f))
          << "input row " << row << " col " << c;
    const float m = numerics::tree_max(xr, L);
    std::vector<float> e(static_cast<size_t>(L));
    for (int c = 0; c < L; ++c) e[static_cast<size_t>(c)] = numerics::eup_exp(xr[c] - m);
    const float inv = numerics::eup_rcp(numerics::tree_sum(e.data(), L));
    double total = 0;
    for (int c = 0; c < L; ++c) {
      want[static_cast<size_t>(row) * L + c] = e[static_cast<size_t>(c)] * inv;
      total += want[static_cast<size_t>(row) * L + c];
    }
    EXPECT_NEAR(total, 1.0, 1e-5) << "row " << row;
  }
  EXPECT_EQ(bit_mismatches(y, want), 0);
}

TEST(Examples, SoftmaxFunctionalInterpreterAgrees) {
  expect_functional_state_matches(*run_example("softmax"));
}

// ---- transpose ---------------------------------------------------------------------------------

TEST(Examples, TransposeMovesEveryWordToItsTransposedPlace) {
  const auto r = run_example("transpose");
  const auto& s = r->core->state();
  const int L = r->spec.lanes;
  ASSERT_EQ(L, 128);
  for (int i = 0; i < L; ++i)
    for (int j = 0; j < L; ++j) {
      ASSERT_EQ(s.vmem[int64_t{i} * L + j], static_cast<uint32_t>(i * L + j))
          << "input " << i << "," << j;
      ASSERT_EQ(s.vmem[int64_t{L + j} * L + i], static_cast<uint32_t>(i * L + j))
          << "output " << j << "," << i;
    }
  EXPECT_EQ(r->core->stats().get("units.transpose.ops"), 32);
}

TEST(Examples, TransposeFunctionalInterpreterAgrees) {
  expect_functional_state_matches(*run_example("transpose"));
}

}  // namespace
}  // namespace tessera
