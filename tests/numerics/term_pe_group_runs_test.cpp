// The lean lockstep runs of the vector tile (numerics/term_pe/tile.h), at both vector
// widths (group_runs_avx2: 8 PEs per vector; group_runs_avx512: 16, two groups side by side; a
// width the host lacks is skipped), against reference_step PE by PE and step by step: which groups
// they take (every group whose start accumulators are +0 or fp32 normal, that never overflows and
// ends in fp32's range), and for those the values, step maxima and every counter. Operands are
// built for the paths inside a step: exact products only (timing from the serial row), truncated
// lanes of B values with 1..5 CSD terms at every depth, out-of-bounds terms and zero parallel
// operands (timing per PE), zeros of both signs, subnormals, huge exponent gaps, fixed-exponent
// mode, ragged groups, accumulator widths from the minimum to 23 (start values rounded to the
// width).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "numerics/bf16.h"
#include "numerics/term_encoding.h"
#include "numerics/term_pe/tile.h"
#include "numerics/term_row_case.h"

namespace tessera::numerics {
namespace {

// A finite bf16 value: a zero of either sign (1 in `zero_one_in`), a subnormal, an exponent
// anywhere (huge gaps) or within +-12 of `center` (truncated lanes of every depth); a significand
// with `terms` CSD terms when terms > 0.
Bf16 operand(std::mt19937_64& rng, int center, int zero_one_in, int terms) {
  const uint64_t r = rng();
  const auto sign = static_cast<uint16_t>((r >> 8) & 0x8000);
  if (r % zero_one_in == 0) return Bf16{sign};
  if (r % 29 == 1) return Bf16{static_cast<uint16_t>(sign | ((r >> 30) % 127 + 1))};
  const int e = r % 13 == 2 ? 1 + static_cast<int>((r >> 20) % 254)
                            : std::clamp(center + static_cast<int>((r >> 20) % 25) - 12, 1, 254);
  int m = 128 + static_cast<int>((r >> 40) % 128);
  while (terms > 0 && term_count(static_cast<uint8_t>(m)) != terms) m = 128 + (m - 127) % 128;
  return Bf16{static_cast<uint16_t>(sign | (e << 7) | (m & 0x7f))};
}

// Start accumulators: mostly +0 or normal values near the products of operands around `center`
// (taken), some -0, fp32 subnormals, Inf and huge values (refused).
float start_accumulator(std::mt19937_64& rng, int center) {
  const uint64_t r = rng();
  switch (r % 16) {
    case 0:
    case 1:
      return 0.0f;
    case 2:
      return -0.0f;
    case 3:
      return std::bit_cast<float>(static_cast<uint32_t>((r >> 12) & 0x807fffffu));
    case 4:
      return r % 3 == 0 ? INFINITY : 3e38f;
    default:
      return std::ldexp(static_cast<float>((r >> 16) % 100000) / 1000.0f - 50.0f,
                        2 * (center - 127) + static_cast<int>((r >> 40) % 24) - 12);
  }
}

// Whether group_runs_avx2 must take group g: start accumulators +0 or fp32 normal, at most
// acc_max_exponent once rounded to the accumulator's width, no overflow, final accumulators +0
// or in fp32's normal range.
bool covered(const PeConfig& cfg, const test::RowCase& c, int g, const float* init,
             const test::GroupReference& e) {
  if (e.overflowed) return false;
  for (int v = 0; v < c.valids[g]; ++v) {
    const uint32_t bits = std::bit_cast<uint32_t>(init[c.x0s[g] + v]);
    const int biased = static_cast<int>((bits >> 23) & 0xff);
    // Rounded to W + 1 bits, a start value may carry above acc_max_exponent (Inf).
    if (bits != 0 &&
        (biased == 0 || biased == 255 ||
         accumulator_from_f32(init[c.x0s[g] + v], cfg).kind != PeAccumulator::Kind::Finite))
      return false;
    const PeAccumulator& f = e.final[static_cast<size_t>(v)];
    if (f.kind == PeAccumulator::Kind::Finite && (f.exponent < -126 || f.exponent > 127))
      return false;
  }
  return true;
}

// A width of the kernel: whether it takes this configuration on this host, and its entry point.
struct GroupKernel {
  const char* name;
  bool (*supported)(const PeConfig&);
  void (*run)(const PeConfig&, const detail::TileOperands&, const detail::SerialSteps&, int,
              const detail::RowGroup*, int, detail::GroupTotals&, uint8_t*);
};

void PrintTo(const GroupKernel& kernel, std::ostream* os) {
  *os << kernel.name;
}

const GroupKernel kKernels[] = {
    {"avx2", detail::group_run_supported, detail::group_runs_avx2},
    {"avx512", detail::group_run_avx512_supported, detail::group_runs_avx512},
};

class TermTileGroup : public ::testing::TestWithParam<GroupKernel> {
 protected:
  void SetUp() override {
    if (!GetParam().supported(PeConfig{})) GTEST_SKIP() << GetParam().name << " not on this host";
  }
};

// Runs the kernel on row case c from the start accumulators `init` and checks it against
// reference_group: exactly the covered groups taken, their values, step maxima and counters equal,
// the others untouched. Adds the taken and refused groups to the counts and returns the totals.
detail::GroupTotals expect_group_runs_match_reference(const GroupKernel& kernel,
                                                      const PeConfig& cfg, const test::RowCase& c,
                                                      int steps, const std::vector<float>& init,
                                                      int trial, int& taken, int& refused) {
  std::vector<float> out = init;
  std::vector<int> step_max(static_cast<size_t>(c.count) * steps, 0);
  const std::vector<detail::RowGroup> groups = test::row_groups(c, out.data(), step_max.data());
  detail::GroupTotals totals;
  std::vector<uint8_t> done(c.count);
  EXPECT_TRUE(kernel.supported(cfg)) << kernel.name << ": trial " << trial;
  kernel.run(cfg, c.ops, c.row, steps, groups.data(), c.count, totals, done.data());

  detail::GroupTotals want;
  for (int g = 0; g < c.count; ++g) {
    const test::GroupReference e = test::reference_group(cfg, c, g, init.data());
    const bool take = covered(cfg, c, g, init.data(), e);
    EXPECT_EQ(done[g] != 0, take) << "trial " << trial << " group " << g;
    for (int v = 0; v < c.valids[g]; ++v) {
      const int x = c.x0s[g] + v;
      EXPECT_EQ(std::bit_cast<uint32_t>(out[x]), std::bit_cast<uint32_t>(take ? e.out[v] : init[x]))
          << "trial " << trial << " group " << g << " PE " << v;
    }
    for (int j = 0; j < steps; ++j)
      EXPECT_EQ(step_max[static_cast<size_t>(g) * steps + j], take ? e.slowest[j] : 0)
          << "trial " << trial << " group " << g;
    if (take) test::add_totals(want, e.totals);
    ++(take ? taken : refused);
  }
  EXPECT_EQ(totals.processed, want.processed) << "trial " << trial;
  EXPECT_EQ(totals.skipped_zero, want.skipped_zero) << "trial " << trial;
  EXPECT_EQ(totals.skipped_oob, want.skipped_oob) << "trial " << trial;
  EXPECT_EQ(totals.lane_idle, want.lane_idle) << "trial " << trial;
  EXPECT_EQ(totals.pe_cycles, want.pe_cycles) << "trial " << trial;
  return totals;
}

TEST_P(TermTileGroup, GroupRunsTakeExactlyTheCoveredGroupsAndMatchTheReference) {
  const GroupKernel& kernel = GetParam();
  std::mt19937_64 rng(61);
  int taken = 0, refused = 0;
  detail::GroupTotals all;
  for (int trial = 0; trial < 2400 && !HasFailure(); ++trial) {
    // W = 23 (fp32's rounding) half of the time, else any narrower width down to the minimum.
    const int narrow = kMinAccFractionBits + static_cast<int>(rng() % (23 - kMinAccFractionBits));
    const int W = rng() % 2 == 0 ? 23 : narrow;
    PeConfig cfg{std::vector<int>{2, 5, 8}[rng() % 3],
                 W,
                 rng() % 6 == 0 ? 20 : 127,
                 static_cast<int>(rng() % 3),
                 rng() % 4 == 0,
                 static_cast<int>(rng() % 81) - 40};
    const int L = cfg.lanes, steps = 1 + static_cast<int>(rng() % 12);
    // Products from about 2^-174 (results below fp32's normal range: refused) to 2^68.
    const int center = 40 + static_cast<int>(rng() % 110);
    // B with a fixed term count per trial half of the time (truncated lanes of 1..5 terms).
    const int terms = rng() % 2 == 0 ? 1 + static_cast<int>(rng() % kMaxTerms) : 0;
    const int zero_one_in = std::vector<int>{3, 7, 1000}[rng() % 3];
    const test::RowCase c = test::make_row_case(
        rng, L, steps, [&] { return operand(rng, center, 2, terms); },
        [&] { return operand(rng, center, zero_one_in, 0); });
    std::vector<float> init(c.x_count);
    for (float& v : init) v = rng() % 3 == 0 ? 0.0f : start_accumulator(rng, center);
    all.skipped_oob +=
        expect_group_runs_match_reference(kernel, cfg, c, steps, init, trial, taken, refused)
            .skipped_oob;
  }
  // Both outcomes occur, and the taken groups met out-of-bounds terms.
  EXPECT_GT(taken, 2000);
  EXPECT_GT(refused, 200);
  EXPECT_GT(all.skipped_oob, 0);
}

// The largest truncated-lane values: every significand 255 (ma * mb = 65025; B = 2^8 - 2^0),
// exponents within 8 binades, so lanes lie 1..8 binades below the window's top (h = 1 gives
// 32513, near the 16-bit bound of the truncated-lane sums), with both signs of A and B.
TEST_P(TermTileGroup, LargestTruncatedLanesMatchTheReference) {
  const GroupKernel& kernel = GetParam();
  std::mt19937_64 rng(62);
  int taken = 0, refused = 0;
  for (int trial = 0; trial < 300 && !HasFailure(); ++trial) {
    PeConfig cfg{8, rng() % 2 == 0 ? 23 : 12};
    auto largest = [&] {
      const uint64_t r = rng();
      return Bf16{static_cast<uint16_t>(((r & 1) << 15) | ((120 + (r >> 1) % 8) << 7) | 0x7f)};
    };
    const int steps = 1 + static_cast<int>(rng() % 8);
    const test::RowCase c = test::make_row_case(rng, cfg.lanes, steps, largest, largest);
    const std::vector<float> init(c.x_count, 0.0f);
    expect_group_runs_match_reference(kernel, cfg, c, steps, init, trial, taken, refused);
  }
  EXPECT_EQ(refused, 0);
}

// Groups whose serial row or parallel operand holds Inf or NaN are never taken.
TEST_P(TermTileGroup, RowsWithInfOrNaNAreRefused) {
  const PeConfig cfg;
  for (const bool in_serial : {true, false}) {
    detail::TileOperands ops;
    ops.resize(1, 8, 8);
    for (int k = 0; k < 8; ++k) {
      ops.set_serial(0, k, detail::make_operand(bf16_from_f32(1.0f + k)));
      for (int x = 0; x < 8; ++x)
        ops.set_parallel(k, x, detail::make_operand(bf16_from_f32(0.5f * (x + 1))));
    }
    if (in_serial)
      ops.set_serial(0, 3, detail::make_operand(Bf16{0x7f80}));
    else
      ops.set_parallel(5, 2, detail::make_operand(Bf16{0x7fc1}));
    ops.pack({0});
    detail::SerialSteps row;
    row.build(ops, 0, 1, 8);
    std::vector<float> out(8, 1.0f);
    int step_max = 0;
    const detail::RowGroup group{0, 0, 8, out.data(), 1, &step_max};
    detail::GroupTotals totals;
    uint8_t done = 1;
    GetParam().run(cfg, ops, row, 1, &group, 1, totals, &done);
    EXPECT_EQ(done, 0);
    EXPECT_EQ(out, std::vector<float>(8, 1.0f));
    EXPECT_EQ(step_max, 0);
    EXPECT_EQ(totals.pe_cycles, 0);
  }
}

// A start accumulator that is an fp32 subnormal is refused, also where rounding it to W + 1 bits at
// the normal scale would carry into the normal range (-0x1.fdeed8p-127 at W = 6: 2^-126 there, but
// accumulator_from_f32 rounds at its own leading bit to 0.9921875 * 2^-126).
TEST_P(TermTileGroup, SubnormalStartValuesAreRefused) {
  for (const int W : {23, 6}) {
    const PeConfig cfg{8, W};
    detail::TileOperands ops;
    ops.resize(1, 8, 8);
    for (int k = 0; k < 8; ++k) {
      ops.set_serial(0, k, detail::make_operand(bf16_from_f32(1.0f + k)));
      for (int x = 0; x < 8; ++x)
        ops.set_parallel(k, x, detail::make_operand(bf16_from_f32(0.5f * (x + 1))));
    }
    ops.pack({0});
    detail::SerialSteps row;
    row.build(ops, 0, 1, 8);
    std::vector<float> out(8, 1.0f);
    out[3] = -0x1.fdeed8p-127f;
    const std::vector<float> before = out;
    int step_max = 0;
    const detail::RowGroup group{0, 0, 8, out.data(), 1, &step_max};
    detail::GroupTotals totals;
    uint8_t done = 1;
    GetParam().run(cfg, ops, row, 1, &group, 1, totals, &done);
    EXPECT_EQ(done, 0) << "W = " << W;
    EXPECT_EQ(std::memcmp(out.data(), before.data(), sizeof(float) * out.size()), 0) << "W = " << W;
    EXPECT_EQ(step_max, 0) << "W = " << W;
  }
}

INSTANTIATE_TEST_SUITE_P(Widths, TermTileGroup, ::testing::ValuesIn(kKernels),
                         [](const ::testing::TestParamInfo<GroupKernel>& info) {
                           return std::string(info.param.name);
                         });

// The vectorised row decoding gives make_operand(bf16_from_f32(x)) and everything set_serial and
// set_parallel store, for fp32 bit patterns of every class: every exponent with significands
// around the rounding ties, signed zeros, subnormals, Inf, quiet and signalling NaNs; rows whose
// length is not a multiple of 8; a parallel row written twice (the Inf/NaN count follows).
TEST(TermTileDecode, RowDecodingMatchesTheScalarDecoding) {
  std::vector<float> values;
  for (uint32_t e = 0; e < 256; ++e)
    for (const uint32_t f : {0x0u, 0x1u, 0x7fffu, 0x8000u, 0x8001u, 0x18000u, 0x7f7fffu, 0x7fffffu,
                             0x400000u, 0x12345u})
      for (const uint32_t sign : {0x0u, 0x80000000u})
        values.push_back(std::bit_cast<float>(sign | e << 23 | f));
  std::vector<float> reversed(values.rbegin(), values.rend());
  for (const int K : {static_cast<int>(values.size()), 13, 7}) {
    detail::TileOperands fast, slow;
    fast.resize(1, K, K);
    slow.resize(1, K, K);
    fast.set_serial_row(0, values.data(), K);
    for (const std::vector<float>* row : {&values, &reversed}) {
      fast.set_parallel_row(1, row->data(), K);
      for (int x = 0; x < K; ++x)
        slow.set_parallel(1, x, detail::make_operand(bf16_from_f32((*row)[x])));
    }
    for (int k = 0; k < K; ++k) {
      slow.set_serial(0, k, detail::make_operand(bf16_from_f32(values[k])));
      ASSERT_EQ(std::bit_cast<uint32_t>(fast.s_ops[k]), std::bit_cast<uint32_t>(slow.s_ops[k]))
          << std::bit_cast<uint32_t>(values[k]);
      ASSERT_EQ(fast.s_code[k], slow.s_code[k]) << std::bit_cast<uint32_t>(values[k]);
    }
    for (size_t i = 0; i < slow.p_ops.size(); ++i) {
      ASSERT_EQ(std::bit_cast<uint32_t>(fast.p_ops[i]), std::bit_cast<uint32_t>(slow.p_ops[i]))
          << i;
      ASSERT_EQ(fast.p_code[i], slow.p_code[i]) << i;
      ASSERT_EQ(fast.p_word[i], slow.p_word[i]) << i;
      ASSERT_EQ(fast.p_signed[i], slow.p_signed[i]) << i;
    }
    EXPECT_EQ(fast.p_specials, slow.p_specials);
    EXPECT_GT(slow.p_specials, 0);
  }
}

}  // namespace
}  // namespace tessera::numerics
