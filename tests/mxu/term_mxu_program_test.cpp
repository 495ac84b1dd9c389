// The same program on the timed core with bf16 and with term-serial PEs (core.mxu.pe): the
// instructions are unchanged, the values are the term-serial tile's, the MXU time is the tiles'.
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/core.h"
#include "core/spec.h"
#include "core/term_mxu_report.h"
#include "isa/assembler.h"
#include "numerics/matmul.h"
#include "numerics/term_matmul.h"

namespace tessera::mxutest {
namespace {

// configs/small.json: 2 sublanes x 8 lanes, an 8 x 8 MXU. Weights in vmem rows 0..7, inputs in
// rows 8..9 (ReLU-like: zeros and short significands); the result goes to rows 16..17.
std::vector<float> weights() {
  std::vector<float> w(64);
  for (int i = 0; i < 64; ++i)
    w[static_cast<size_t>(i)] = static_cast<float>((i * 37) % 17 - 8) * 0.0625f;
  return w;
}
std::vector<float> inputs() {
  std::vector<float> a(16);
  for (int i = 0; i < 16; ++i)
    a[static_cast<size_t>(i)] = i % 3 == 0 ? 0.0f : static_cast<float>(i) * 0.375f;
  return a;
}

std::string program() {
  auto floats = [](const std::vector<float>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s;
  };
  return ".vmem 0\n.float " + floats(weights()) + "\n.vmem 8\n.float " + floats(inputs()) +
         "\n"
         "  sli s1, 0\n"
         "  vld v0, [s1+0]\n  vld v1, [s1+2]\n  vld v2, [s1+4]\n  vld v3, [s1+6]\n  vld v4, "
         "[s1+8]\n"
         "  mlw v0\n  mlw v1\n  mlw v2\n  mlw v3\n  mflip\n"
         "  mmul v4\n  mpop v5\n  vst v5, [s1+16]\n  halt\n";
}

struct Result {
  std::vector<float> out;
  int64_t cycles;
  core::MxuStats mxu;
};

Result run(const core::CoreSpec& spec) {
  const isa::Program p = isa::assemble(program(), "term_mxu.s");
  core::Core c(spec, p, core::TimedOptions{});
  c.run();
  Result r{std::vector<float>(16), c.cycles(), c.machine().mxu().stats()};
  for (int i = 0; i < 16; ++i)
    r.out[static_cast<size_t>(i)] = std::bit_cast<float>(c.state().vmem[16 * 8 + i]);
  return r;
}

TEST(TermMxuProgram, SameProgramGivesTheTermSerialValuesAndTiming) {
  core::CoreSpec spec =
      core::load_core_spec(std::string(TESSERA_SOURCE_DIR) + "/configs/small.json");
  const Result bf16 = run(spec);
  spec.mxu_pe = core::MxuPe::TermSerial;
  spec.term.tile.rows = 2;
  spec.term.tile.cols = 4;
  spec.term.tile.pe.lanes = 4;
  spec.term.tiles = 1;
  const Result term = run(spec);

  std::vector<float> want_bf16(16, 0.0f), want_term(16, 0.0f);
  const std::vector<float> w = weights(), a = inputs();
  numerics::mxu_matmul_accumulate(a.data(), 8, w.data(), 8, want_bf16.data(), 8, 2, 8, 8);
  numerics::TermMatmulStats st;
  numerics::term_matmul_accumulate_reference(spec.term.tile, a.data(), 8, w.data(), 8,
                                             want_term.data(), 8, 2, 8, 8, &st);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(std::bit_cast<uint32_t>(bf16.out[static_cast<size_t>(i)]),
              std::bit_cast<uint32_t>(want_bf16[static_cast<size_t>(i)]))
        << i;
    EXPECT_EQ(std::bit_cast<uint32_t>(term.out[static_cast<size_t>(i)]),
              std::bit_cast<uint32_t>(want_term[static_cast<size_t>(i)]))
        << i;
  }
  EXPECT_EQ(term.mxu.term.terms_processed, st.terms_processed);
  EXPECT_EQ(term.mxu.busy_cycles, st.cycles + spec.term.push_cycles);  // one tile runs both blocks
  EXPECT_EQ(bf16.mxu.busy_cycles, spec.sublanes);
  // The program waits for the result: the run is longer by the difference in MXU time.
  const int64_t bf16_result = spec.sublanes - 1 + spec.mxu_rows + spec.mxu_cols - 2;
  const int64_t term_result = st.cycles + spec.term.push_cycles - 1 + spec.term.latency_cycles;
  EXPECT_EQ(term.cycles - bf16.cycles, term_result - bf16_result);

  const core::TermMxuSummary s = core::summarize_term_mxu(spec, term.mxu);
  EXPECT_EQ(s.bf16_busy_equal_pe, 2 * (8 / 4));  // 2 blocks on one tile, 2 steps each
  EXPECT_DOUBLE_EQ(s.speedup_equal_pe, static_cast<double>(s.bf16_busy_equal_pe) /
                                           static_cast<double>(term.mxu.busy_cycles));
}

}  // namespace
}  // namespace tessera::mxutest
