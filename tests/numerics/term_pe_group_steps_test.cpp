// The vector tile (numerics/term_pe/tile.h) step by step against reference_step, on accumulator
// states the fp32 interface cannot produce (all-ones significands at W = 24, wide exponents).
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "numerics/term_pe/reference.h"
#include "numerics/term_pe/tile.h"

namespace tessera::numerics {
namespace {

PeAccumulator random_state(std::mt19937_64& rng, int W) {
  using Kind = PeAccumulator::Kind;
  switch (rng() % 10) {
    case 0:
      return PeAccumulator{Kind::Zero, (rng() & 1) != 0, 0, 0};
    case 1:
      return rng() % 8 == 0 ? PeAccumulator{Kind::Inf, (rng() & 1) != 0, 0, 0} : PeAccumulator{};
    default:
      break;
  }
  const uint64_t ones = (uint64_t{1} << (W + 1)) - 1;
  uint64_t sig = rng() % 3 == 0 ? ones - (rng() % 4) : ((rng() & ones) | (uint64_t{1} << W));
  sig = std::max(sig, uint64_t{1} << W);
  return PeAccumulator{Kind::Finite, (rng() & 1) != 0, static_cast<int>(rng() % 40) - 20, sig};
}

// specials: Inf sometimes (the group's general path); without, the exact-product path runs.
Bf16 random_operand(std::mt19937_64& rng, bool specials) {
  const uint64_t r = rng();
  if (r % 9 == 0) return Bf16{static_cast<uint16_t>((r >> 8) & 0x8000)};
  if (specials && r % 97 == 1) return Bf16{0x7f80};
  if (r % 97 == 2) return Bf16{0x0003};
  const auto e = static_cast<uint16_t>(117 + (r >> 20) % 20);
  return Bf16{static_cast<uint16_t>(((r >> 8) & 0x8000) | (e << 7) | ((r >> 40) & 0x7f))};
}

TEST(TermTileAvx2, GroupStepsMatchReferenceStepByStep) {
  std::mt19937_64 rng(31);
  for (int trial = 0; trial < 4000; ++trial) {
    PeConfig cfg;
    cfg.acc_fraction_bits = 4 + static_cast<int>(rng() % 21);  // 4..24
    cfg.lanes = static_cast<int>(std::vector<int>{1, 3, 8}[rng() % 3]);
    cfg.min_step_cycles = static_cast<int>(rng() % 2);
    cfg.acc_max_exponent = rng() % 4 == 0 ? 15 : 127;
    cfg.fixed_exponent_mode = rng() % 4 == 0;
    cfg.fixed_exponent = static_cast<int>(rng() % 61) - 40;
    if (!detail::tile_avx2_supported(cfg)) GTEST_SKIP() << "no AVX2 on this host";
    const int L = cfg.lanes, steps = 1 + static_cast<int>(rng() % 4), kp = steps * L;
    const int valid = 1 + static_cast<int>(rng() % detail::kGroupPes),
              x0 = static_cast<int>(rng() % 3);
    const bool specials = trial % 2 == 0;
    detail::TileOperands ops;
    ops.resize(1, kp, x0 + valid);
    std::vector<Bf16> serial(kp), parallel(static_cast<size_t>(kp) * (x0 + valid));
    for (int k = 0; k < kp; ++k) {
      serial[k] = random_operand(rng, specials);
      ops.set_serial(0, k, detail::make_operand(serial[k]));
      for (int x = 0; x < x0 + valid; ++x) {
        parallel[static_cast<size_t>(k) * (x0 + valid) + x] = random_operand(rng, specials);
        ops.set_parallel(k, x,
                         detail::make_operand(parallel[static_cast<size_t>(k) * (x0 + valid) + x]));
      }
    }
    std::vector<PeAccumulator> fast(valid), ref(valid);
    for (int v = 0; v < valid; ++v) fast[v] = ref[v] = random_state(rng, cfg.acc_fraction_bits);
    std::vector<int> cycles(static_cast<size_t>(detail::kGroupPes) * steps);
    detail::GroupTotals totals;
    detail::SerialSteps row;
    row.build(ops, 0, steps, L);
    ops.pack({x0});
    detail::group_steps_avx2(cfg, ops, row, 0, x0, 0, valid, steps, fast.data(), cycles.data(),
                             totals);
    detail::GroupTotals want;
    for (int v = 0; v < valid; ++v) {
      for (int j = 0; j < steps; ++j) {
        std::vector<Bf16> a(L), b(serial.begin() + j * L, serial.begin() + (j + 1) * L);
        for (int i = 0; i < L; ++i)
          a[i] = parallel[static_cast<size_t>(j * L + i) * (x0 + valid) + x0 + v];
        const StepStats s = reference_step(cfg, a, b, ref[v]);
        ASSERT_EQ(cycles[static_cast<size_t>(j) * detail::kGroupPes + v], s.cycles)
            << "trial " << trial;
        for (int i = 0; i < L; ++i) {
          want.processed += s.lanes[i].processed;
          want.skipped_zero += s.lanes[i].skipped_zero;
          want.skipped_oob += s.lanes[i].skipped_oob;
          want.lane_idle += s.cycles - s.lanes[i].processed;
        }
      }
      ASSERT_EQ(fast[v], ref[v]) << "trial " << trial << " PE " << v << ": " << to_string(fast[v])
                                 << " vs " << to_string(ref[v]);
    }
    EXPECT_EQ(totals.processed, want.processed);
    EXPECT_EQ(totals.skipped_zero, want.skipped_zero);
    EXPECT_EQ(totals.skipped_oob, want.skipped_oob);
    EXPECT_EQ(totals.lane_idle, want.lane_idle);
  }
}

}  // namespace
}  // namespace tessera::numerics
