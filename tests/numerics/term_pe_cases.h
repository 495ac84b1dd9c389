// Random and edge-class cases for the term-serial PE, shared by the default-tier and long-tier
// agreement tests (fast model vs bit-level reference).
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "numerics/bf16.h"
#include "numerics/term_pe/reference.h"
#include "numerics/term_pe/term_pe.h"

namespace tessera::numerics::testing {

// Edge operands: signed zeros, subnormal extremes, normal extremes, one, Inf, NaN (quiet and
// signalling patterns).
inline constexpr std::array<uint16_t, 20> kEdgeBf16 = {
    0x0000, 0x8000, 0x0001, 0x8001, 0x007f, 0x807f, 0x0080, 0x8080, 0x7f7f, 0xff7f,
    0x3f80, 0xbf80, 0x7f80, 0xff80, 0x7fc0, 0xffc1, 0x7f81, 0x3fff, 0x4000, 0x0040};

// n bf16 values (as fp32) from N(0, scale), a zero_fraction of them +0.
inline std::vector<float> random_bf16(int n, std::mt19937& rng, float scale, float zero_fraction) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng) < zero_fraction ? 0.0f : round_to_bf16(dist(rng));
  return v;
}

struct PeCase {
  PeConfig cfg;
  std::vector<Bf16> a, b;
  PeAccumulator acc;
};

class PeCaseGenerator {
 public:
  explicit PeCaseGenerator(uint64_t seed) : m_rng(seed) {}

  PeCase next() {
    PeCase c;
    c.cfg = random_config();
    const int n = pick(4) == 0 ? static_cast<int>(pick(c.cfg.lanes + 1)) : c.cfg.lanes;
    const int center = static_cast<int>(pick(61)) - 30;  // exponent cluster of this case
    const int style = static_cast<int>(pick(4));
    for (int i = 0; i < n; ++i) {
      c.a.push_back(operand(style, center));
      c.b.push_back(operand(style, center));
    }
    c.acc = accumulator(c.cfg, center);
    if (pick(5) == 0) {  // fixed-exponent mode, around the products or anywhere
      c.cfg.fixed_exponent_mode = true;
      c.cfg.fixed_exponent = pick(4) == 0 ? static_cast<int>(pick(801)) - 400
                                          : 2 * center + static_cast<int>(pick(41)) - 20;
    }
    return c;
  }

 private:
  uint64_t pick(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(m_rng); }

  PeConfig random_config() {
    static constexpr int kWidths[] = {4,  5,  7,  8,  10, 16, 23, 23, 23, 24,
                                      31, 40, 52, 55, 56, 57, 63, 64, 80, 100};
    static constexpr int kLanes[] = {1, 2, 3, 8, 8, 8, 16, 64};
    static constexpr int kMaxExp[] = {127, 127, 127, 15, 200};
    PeConfig cfg;
    cfg.acc_fraction_bits = kWidths[pick(std::size(kWidths))];
    cfg.lanes = kLanes[pick(std::size(kLanes))];
    cfg.acc_max_exponent = kMaxExp[pick(std::size(kMaxExp))];
    cfg.min_step_cycles = static_cast<int>(pick(3));
    return cfg;
  }

  // style 0: any 16-bit pattern; 1: edge values mixed with clustered ones; 2 and 3: clustered
  // exponents (real tensors), with zeros (ReLU) and an occasional far outlier.
  Bf16 operand(int style, int center) {
    if (style == 0) return Bf16{static_cast<uint16_t>(pick(65536))};
    if (style == 1 && pick(3) == 0) return Bf16{kEdgeBf16[pick(kEdgeBf16.size())]};
    if (pick(5) == 0) return Bf16{static_cast<uint16_t>(pick(2) << 15)};
    int e = center + static_cast<int>(pick(9)) - 4;
    if (pick(50) == 0) e = static_cast<int>(pick(254)) - 126;
    const auto field = static_cast<uint16_t>(e + 127);
    return Bf16{static_cast<uint16_t>((pick(2) << 15) | (field << 7) | pick(128))};
  }

  PeAccumulator accumulator(const PeConfig& cfg, int center) {
    using Kind = PeAccumulator::Kind;
    switch (pick(12)) {
      case 0:
        return PeAccumulator{Kind::Zero, pick(2) == 1, 0, 0};
      case 1:
        return PeAccumulator{Kind::Inf, pick(2) == 1, 0, 0};
      case 2:
        return PeAccumulator{Kind::NaN, false, 0, 0};
      case 3:
        return accumulator_from_f32(std::bit_cast<float>(static_cast<uint32_t>(m_rng())), cfg);
      case 4:
        return PeAccumulator{Kind::Zero, false, 0, 0};
      default:
        break;
    }
    // A finite state of the configured width, exponent near the operands' products or anywhere.
    const int W = cfg.acc_fraction_bits;
    unsigned __int128 sig = (static_cast<unsigned __int128>(m_rng()) << 64) | m_rng();
    sig = (sig & ((static_cast<unsigned __int128>(1) << W) - 1)) |
          (static_cast<unsigned __int128>(1) << W);
    int exponent = 2 * center + static_cast<int>(pick(21)) - 10;
    if (pick(6) == 0) exponent = static_cast<int>(pick(cfg.acc_max_exponent + 400)) - 400;
    if (exponent > cfg.acc_max_exponent) exponent = cfg.acc_max_exponent;
    return PeAccumulator{Kind::Finite, pick(2) == 1, exponent, sig};
  }

  std::mt19937_64 m_rng;
};

inline std::string describe(const PeCase& c) {
  std::string s = fmt::format(
      "W={} L={} maxexp={} fixed={}:{} acc={} a,b=", c.cfg.acc_fraction_bits, c.cfg.lanes,
      c.cfg.acc_max_exponent, c.cfg.fixed_exponent_mode, c.cfg.fixed_exponent, to_string(c.acc));
  for (size_t i = 0; i < c.a.size(); ++i)
    s += fmt::format(" {:04x},{:04x}", c.a[i].bits, c.b[i].bits);
  return s;
}

// Runs one case through both models; returns true when value and statistics agree.
inline ::testing::AssertionResult fast_matches_reference(const PeCase& c) {
  PeAccumulator fast_acc = c.acc, ref_acc = c.acc;
  const StepStats fast = TermPe(c.cfg).step(c.a, c.b, fast_acc);
  const StepStats ref = reference_step(c.cfg, c.a, c.b, ref_acc);
  if (!(fast_acc == ref_acc))
    return ::testing::AssertionFailure() << "value: fast " << to_string(fast_acc) << " reference "
                                         << to_string(ref_acc) << " for " << describe(c);
  if (!(fast == ref))
    return ::testing::AssertionFailure() << "term statistics differ for " << describe(c);
  return ::testing::AssertionSuccess();
}

}  // namespace tessera::numerics::testing
