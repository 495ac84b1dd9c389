// The Adam unit's own HBM traffic under the exponent base-delta encoding (core/hbm_encoding.h,
// core/adam_unit.h): every DMA micro-op moves the encoded size of its words, counted per kind;
// the values are those without the encoding.
#include <random>

#include <gtest/gtest.h>

#include "adam_test_util.h"
#include "cli/bench/adam_unit_session.h"
#include "compiler/adam_programs.h"
#include "isa/adam_isa.h"

namespace tessera::core {
namespace {

using compiler::adam_unit_init_program;
using compiler::adam_unit_step_program;

using adam_test::random_vector;
using adam_test::same_bits;
using bench::AdamUnitSession;

CoreSpec spec(bool on, int64_t block, int64_t dcache, double bytes_per_cycle) {
  CoreSpec s = adam_test::small_spec(block, dcache);
  s.hbm_encoding.on = on;  // groups of 16, 3-bit deltas, fp32 words: the defaults
  s.adam.dma_bytes_per_cycle = bytes_per_cycle;
  return s;
}

const HbmTraffic& of(const AdamUnitSession& s, HbmKind k) {
  return s.encoder().traffic()[static_cast<size_t>(k)];
}

// Encoded bytes of a chunk of n fp32 words that share one exponent (no escapes), groups of 16 with
// 3-bit deltas: a base of 8 bits per group, sign + 23 mantissa bits per word, a delta per word
// after the first of its group.
int64_t same_exponent_bytes(int64_t n) {
  const int64_t groups = (n + 15) / 16;
  return (groups * 8 + n * 24 + (n - groups) * 3 + 7) / 8;
}

// 192 parameters in 3 blocks of 64; the data cache holds 1 block, so 2 blocks' m and v spill.
// theta in [1.5, 1.75) and g = 0.5: after one step theta stays in [1, 2), and m = 0.05, v = 0.00025
// everywhere, so every chunk has one exponent (64 words: 219 bytes; the 256 zeroed spill words:
// 874 bytes).
TEST(AdamHbmEncoding, UnitDmaMovesAndCountsTheEncodedSizePerKind) {
  const int64_t n = 192, block = 64;
  AdamUnitSession s(spec(true, block, 8 * block, 1.0), n, AdamHyper{});
  std::vector<float> theta;
  for (int64_t i = 0; i < n; ++i) theta.push_back(1.5f + static_cast<float>(i) / 1024.0f);
  s.set_theta(theta);
  s.step(std::vector<float>(static_cast<size_t>(n), 0.5f));
  ASSERT_EQ(s.unit().resident_blocks(), 1);
  const int64_t chunk = same_exponent_bytes(64);
  ASSERT_EQ(chunk, 219);
  ASSERT_EQ(same_exponent_bytes(256), 874);
  // theta in and out per block; g in per block.
  EXPECT_EQ(of(s, HbmKind::kWeights), (HbmTraffic{6, 6 * 256, 6 * chunk}));
  EXPECT_EQ(of(s, HbmKind::kGradients), (HbmTraffic{3, 3 * 256, 3 * chunk}));
  // ASSIGN's zeroing (one stream of 256 words), then per spilled block one transfer in and one out
  // (m and v: two streams of 64 words each).
  EXPECT_EQ(of(s, HbmKind::kOptimizerState), (HbmTraffic{5, 1024 + 4 * 512, 874 + 4 * 2 * chunk}));
  EXPECT_EQ(of(s, HbmKind::kActivations), HbmTraffic{});
  // Programs (two runs: the bootstrap word pair and the instruction fetch each) and
  // hyperparameters.
  const auto words = [](const std::vector<uint64_t>& program) {
    return 2 * static_cast<int64_t>(program.size());
  };
  const HbmTraffic& other = of(s, HbmKind::kOther);
  EXPECT_EQ(other.requests, 5);
  EXPECT_EQ(other.raw_bytes, 4 * (2 + words(adam_unit_init_program(s.layout())) + kAdamHyperWords +
                                  2 + words(adam_unit_step_program(s.layout()))));
  EXPECT_LT(other.encoded_bytes, other.raw_bytes);

  const AdamUnitStats& st = s.unit().stats();
  EXPECT_EQ(st.theta_in_bytes, 3 * chunk);
  EXPECT_EQ(st.g_in_bytes, 3 * chunk);
  EXPECT_EQ(st.theta_out_bytes, 3 * chunk);
  EXPECT_EQ(st.spill_in_bytes, 2 * 2 * chunk);
  EXPECT_EQ(st.spill_out_bytes, 874 + 2 * 2 * chunk);
  int64_t encoded = 0;
  for (const HbmTraffic& t : s.encoder().traffic()) encoded += t.encoded_bytes;
  EXPECT_EQ(st.hbm_read_bytes() + st.hbm_write_bytes(), encoded);
  // At 1 byte per cycle the path is busy one cycle per encoded byte.
  EXPECT_EQ(st.busy[static_cast<int>(AdamSub::Dma)], encoded);
}

TEST(AdamHbmEncoding, OffMovesFourBytesPerWordAndCountsNothing) {
  const int64_t n = 192, block = 64;
  AdamUnitSession s(spec(false, block, 8 * block, 1.0), n, AdamHyper{});
  s.step(std::vector<float>(static_cast<size_t>(n), 0.5f));
  EXPECT_EQ(s.encoder().traffic(), HbmTrafficByKind{});
  const AdamUnitStats& st = s.unit().stats();
  EXPECT_EQ(st.theta_in_bytes, 4 * n);
  EXPECT_EQ(st.spill_out_bytes, 2 * 8 * (n - block));
  EXPECT_EQ(st.busy[static_cast<int>(AdamSub::Dma)], st.hbm_read_bytes() + st.hbm_write_bytes());
}

// Random theta and gradients, most blocks spilled, an HBM-bound path: the same theta, m and v bit
// for bit with the encoding on and off, in fewer cycles with it on.
TEST(AdamHbmEncoding, ValuesAreIdenticalOnAndOffAndTheStepsTakeFewerCycles) {
  const int64_t n = 4096, block = 256;
  AdamUnitSession off(spec(false, block, 8 * 1024, 4.0), n, AdamHyper{});
  AdamUnitSession on(spec(true, block, 8 * 1024, 4.0), n, AdamHyper{});
  std::mt19937 rng(7);
  const std::vector<float> theta = random_vector(rng, n, 1.0f);
  off.set_theta(theta), on.set_theta(theta);
  for (int k = 0; k < 5; ++k) {
    const std::vector<float> g = random_vector(rng, n, 0.1f);
    off.step(g), on.step(g);
  }
  EXPECT_TRUE(same_bits(off.theta(), on.theta()));
  std::vector<float> m_off, m_on, v_off, v_on;
  for (int64_t i = 0; i < n; ++i) {
    m_off.push_back(off.unit().m_at(off.hbm(), i)), m_on.push_back(on.unit().m_at(on.hbm(), i));
    v_off.push_back(off.unit().v_at(off.hbm(), i)), v_on.push_back(on.unit().v_at(on.hbm(), i));
  }
  EXPECT_TRUE(same_bits(m_off, m_on));
  EXPECT_TRUE(same_bits(v_off, v_on));
  EXPECT_LT(on.cycles(), off.cycles());
  for (HbmKind k : {HbmKind::kWeights, HbmKind::kGradients, HbmKind::kOptimizerState}) {
    EXPECT_GT(of(on, k).requests, 0) << to_string(k);
    EXPECT_LT(of(on, k).encoded_bytes, of(on, k).raw_bytes) << to_string(k);
  }
}

}  // namespace
}  // namespace tessera::core
