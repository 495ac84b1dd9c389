// The matrix unit with term-serial PEs (core.mxu.pe = term-serial, core/mxu.h): same programming
// model as the bf16 MXU, values of numerics::term_matmul_accumulate, time of the tiles.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "common/config.h"
#include "common/error.h"
#include "mxu_driver.h"
#include "numerics/bf16.h"
#include "numerics/term_matmul.h"

namespace tessera::mxutest {
namespace {

core::CoreSpec term_spec(int R, int C, int S, int tiles) {
  core::CoreSpec s = mxu_spec(R, C, S, true);
  s.mxu_pe = core::MxuPe::TermSerial;
  s.term.tile = numerics::TermTileConfig{};
  s.term.tile.rows = 2;
  s.term.tile.cols = 4;
  s.term.tile.pe.lanes = 4;
  s.term.tiles = tiles;
  s.term.push_cycles = 3;
  s.term.latency_cycles = 5;
  return s;
}

// A GEMM whose inputs look like activations: ReLU'd (many zeros), short significands.
GemmCase activation_gemm(int M, int K, int N, uint32_t seed) {
  GemmCase g = random_gemm(M, K, N, seed);
  for (float& v : g.a) v = std::max(0.0f, v);
  return g;
}

// The term-serial tile over the whole K, K tile by K tile (R rows each) through fp32, as the MXU's
// mmul.st / mmul.acc chain does.
std::vector<float> term_reference(const core::CoreSpec& spec, const GemmCase& g) {
  std::vector<float> a(g.a), b(g.b), c(static_cast<size_t>(g.M) * g.N, 0.0f);
  for (float& v : a) v = numerics::round_to_bf16(v);
  for (float& v : b) v = numerics::round_to_bf16(v);
  for (int k0 = 0; k0 < g.K; k0 += spec.mxu_rows) {
    const int kk = std::min(spec.mxu_rows, g.K - k0);
    numerics::term_matmul_accumulate_reference(spec.term.tile, &a[k0], g.K,
                                               &b[static_cast<size_t>(k0) * g.N], g.N, c.data(),
                                               g.N, g.M, kk, g.N, nullptr);
  }
  return c;
}

TEST(TermMxu, ValuesAreTheTermSerialTilesThroughTheAccumulatorChain) {
  uint32_t seed = 7;
  for (auto [M, K, N, R, C, S] : std::vector<std::array<int, 6>>{
           {8, 8, 8, 8, 8, 2}, {6, 20, 9, 8, 4, 2}, {12, 33, 17, 16, 8, 4}}) {
    SCOPED_TRACE(testing::Message()
                 << M << "x" << K << "x" << N << " R=" << R << " C=" << C << " S=" << S);
    const GemmCase g = activation_gemm(M, K, N, seed++);
    const core::CoreSpec spec = term_spec(R, C, S, 2);
    const FastRun fast = run_fast(spec, g);
    const std::vector<float> ref = term_reference(spec, g);
    ASSERT_EQ(fast.c.size(), ref.size());
    for (size_t i = 0; i < ref.size(); ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(fast.c[i]), std::bit_cast<uint32_t>(ref[i]))
          << "element " << i;
    EXPECT_EQ(fast.stats.term.macs, fast.stats.macs);
    EXPECT_GT(fast.stats.term.terms_skipped_zero, 0);
  }
}

TEST(TermMxu, OnePushLastsItsBusiestTileAndTheResultFollowsAfterTheLatency) {
  const int R = 8, C = 8, S = 4;
  const GemmCase g = activation_gemm(S, R, C, 3);
  for (int tiles : {1, 2, 3, 4}) {
    SCOPED_TRACE(testing::Message() << tiles << " tiles");
    const core::CoreSpec spec = term_spec(R, C, S, tiles);
    const FastRun fast = run_fast(spec, g);
    // Output blocks of 2 x 4 PEs, m-major, dealt round-robin: computed one by one here.
    std::vector<int64_t> tile_busy(static_cast<size_t>(tiles), 0);
    int b = 0;
    for (int m0 = 0; m0 < S; m0 += 2)
      for (int n0 = 0; n0 < C; n0 += 4, ++b) {
        std::vector<float> acc(8, 0.0f);
        numerics::TermMatmulStats st;
        numerics::term_matmul_accumulate(spec.term.tile, &g.a[static_cast<size_t>(m0) * R], R,
                                         &g.b[n0], C, acc.data(), 4, 2, R, 4, &st);
        tile_busy[static_cast<size_t>(b % tiles)] += st.cycles;
      }
    const int64_t occupancy =
        *std::max_element(tile_busy.begin(), tile_busy.end()) + spec.term.push_cycles;
    EXPECT_EQ(fast.stats.busy_cycles, occupancy);
    // Weights shift in for R cycles (0..R-1), the push starts at R.
    EXPECT_EQ(fast.stats.last_result_cycle, R + occupancy - 1 + spec.term.latency_cycles);
    int64_t all_blocks = 0;
    for (int64_t t : tile_busy) all_blocks += t;
    EXPECT_EQ(fast.stats.term.cycles, all_blocks);
    EXPECT_EQ(fast.stats.term_tile_imbalance,
              (occupancy - spec.term.push_cycles) * tiles - all_blocks);
  }
}

TEST(TermMxu, AllZeroInputsTakeOneCyclePerStep) {
  const int R = 8, C = 8, S = 2;
  GemmCase g = random_gemm(S, R, C, 5);
  std::fill(g.a.begin(), g.a.end(), 0.0f);
  const core::CoreSpec spec = term_spec(R, C, S, 1);
  const FastRun fast = run_fast(spec, g);
  // 1 x 2 blocks of 2 x 4 PEs, R / lanes = 2 steps each, one cycle per step (min_step_cycles).
  EXPECT_EQ(fast.stats.term.terms_processed, 0);
  EXPECT_EQ(fast.stats.term.cycles, 4);
  EXPECT_EQ(fast.stats.busy_cycles, 4 + spec.term.push_cycles);
  for (float v : fast.c) EXPECT_EQ(std::bit_cast<uint32_t>(v), 0u);
}

TEST(TermMxu, Bf16PesKeepTheSystolicTiming) {
  const GemmCase g = random_gemm(8, 8, 8, 9);
  const core::CoreSpec spec = mxu_spec(8, 8, 2, true);
  const FastRun fast = run_fast(spec, g);
  EXPECT_EQ(fast.stats.busy_cycles, 8);  // 4 pushes x sublanes
  EXPECT_EQ(fast.stats.term.macs, 0);
}

TEST(TermMxu, ConfigSelectsThePeAndDerivesTheTileCount) {
  ConfigReader r = ConfigReader::from_string(
      R"({"core": {"mxu": {"pe": "term-serial", "term": {"acc_width": 12}}}})", "t.json");
  const core::CoreSpec s = core::read_core_spec(r);
  r.finish();
  EXPECT_EQ(s.mxu_pe, core::MxuPe::TermSerial);
  EXPECT_EQ(s.term.tile.pe.acc_fraction_bits, 12);
  EXPECT_EQ(s.term.tiles, (8 / 8) * (128 / 8));  // one PE per output of a push (sublanes x C)
}

TEST(TermMxu, UnknownPe_bad) {
  ConfigReader r = ConfigReader::from_string(R"({"core": {"mxu": {"pe": "int8"}}})", "t.json");
  try {
    core::read_core_spec(r);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "t.json: key 'core.mxu.pe': 'int8' is not one of: bf16, term-serial");
  }
}

}  // namespace
}  // namespace tessera::mxutest
