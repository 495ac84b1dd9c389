#include "numerics/term_pe/term_pe.h"

#include <bit>
#include <cmath>

#include <fmt/format.h>

#include "common/error.h"
#include "numerics/term_pe/scalar_step.h"

namespace tessera::numerics {

namespace {

void check_range(const char* field, int value, int lo, int hi) {
  if (value < lo || value > hi)
    throw Error(fmt::format("PeConfig.{}", field),
                fmt::format("{} is out of range [{}, {}]", value, lo, hi));
}

std::string u128_hex(unsigned __int128 x) {
  const auto hi = static_cast<uint64_t>(x >> 64);
  const auto lo = static_cast<uint64_t>(x);
  return hi != 0 ? fmt::format("0x{:x}{:016x}", hi, lo) : fmt::format("0x{:x}", lo);
}

}  // namespace

void PeConfig::validate() const {
  check_range("lanes", lanes, 1, kMaxPeLanes);
  check_range("acc_fraction_bits", acc_fraction_bits, kMinAccFractionBits, kMaxAccFractionBits);
  check_range("acc_max_exponent", acc_max_exponent, 15, 1023);
  check_range("min_step_cycles", min_step_cycles, 0, kTermSlots);
  check_range("fixed_exponent", fixed_exponent, -kMaxFixedExponent, kMaxFixedExponent);
}

std::string to_string(const PeAccumulator& acc) {
  const char* sign = acc.negative ? "-" : "+";
  switch (acc.kind) {
    case PeAccumulator::Kind::Zero:
      return fmt::format("{}0", sign);
    case PeAccumulator::Kind::Inf:
      return fmt::format("{}Inf", sign);
    case PeAccumulator::Kind::NaN:
      return "NaN";
    case PeAccumulator::Kind::Finite:
      break;
  }
  return fmt::format("{}{} * 2^(exp {} - W)", sign, u128_hex(acc.significand), acc.exponent);
}

PeAccumulator accumulator_from_f32(float f, const PeConfig& cfg) {
  using Kind = PeAccumulator::Kind;
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const bool negative = (u >> 31) != 0;
  const int e = static_cast<int>((u >> 23) & 0xff);
  const uint32_t frac = u & 0x7fffffu;
  if (e == 0xff)
    return PeAccumulator{frac != 0 ? Kind::NaN : Kind::Inf, frac != 0 ? false : negative, 0, 0};
  if (e == 0 && frac == 0) return PeAccumulator{Kind::Zero, negative, 0, 0};
  // value = sig24 * 2^(exp24 - 23) with sig24 having its leading one at bit lead.
  const uint32_t sig24 = e == 0 ? frac : (frac | 0x800000u);
  const int exp_of_bit23 = e == 0 ? -126 : e - 127;
  const int lead = std::bit_width(sig24) - 1;
  const int W = cfg.acc_fraction_bits;
  const int exponent = exp_of_bit23 - (23 - lead);
  auto sig = static_cast<unsigned __int128>(sig24);
  int adjust = 0;
  if (lead > W) {
    sig = detail::shift_right_rne(sig, lead - W);
    if ((sig >> (W + 1)) != 0) {
      sig >>= 1;
      adjust = 1;
    }
  } else {
    sig <<= (W - lead);
  }
  if (exponent + adjust > cfg.acc_max_exponent) return PeAccumulator{Kind::Inf, negative, 0, 0};
  return PeAccumulator{Kind::Finite, negative, exponent + adjust, sig};
}

// value = sig * 2^(exp - W). fp32 keeps bits of weight >= 2^max(exp - 23, -149): the shift s
// below drops exactly the bits under that weight (rounding to nearest even), q is then the fp32
// significand field plus hidden bit (q = 2^24 after a carry moves to the next binade; for
// subnormals q < 2^23 and q = 2^23 is the smallest normal, so bits = q works in both cases).
float accumulator_to_f32(const PeAccumulator& acc, const PeConfig& cfg) {
  using Kind = PeAccumulator::Kind;
  const uint32_t sign = acc.negative ? 0x80000000u : 0u;
  switch (acc.kind) {
    case Kind::Zero:
      return std::bit_cast<float>(sign);
    case Kind::Inf:
      return std::bit_cast<float>(sign | 0x7f800000u);
    case Kind::NaN:
      return std::bit_cast<float>(0x7fc00000u);
    case Kind::Finite:
      break;
  }
  const int W = cfg.acc_fraction_bits;
  if (acc.exponent > 127) return std::bit_cast<float>(sign | 0x7f800000u);
  const int lsb_exp = std::max(acc.exponent - 23, -149);  // weight of fp32's last kept bit
  const int s = lsb_exp - (acc.exponent - W);             // bits of sig below it
  unsigned __int128 q;
  if (s <= 0)
    q = acc.significand << -s;
  else if (s > W + 1)
    q = 0;  // below half of the smallest subnormal
  else
    q = detail::shift_right_rne(acc.significand, s);
  if (acc.exponent < -126) return std::bit_cast<float>(sign | static_cast<uint32_t>(q));
  int exponent = acc.exponent;
  if ((q >> 24) != 0) {
    q >>= 1;
    ++exponent;
  }
  if (exponent > 127) return std::bit_cast<float>(sign | 0x7f800000u);
  return std::bit_cast<float>(sign | (static_cast<uint32_t>(exponent + 127) << 23) |
                              (static_cast<uint32_t>(q) & 0x7fffffu));
}

TermPe::TermPe(const PeConfig& cfg) : m_cfg(cfg) {
  m_cfg.validate();
}

StepStats TermPe::step(std::span<const Bf16> a, std::span<const Bf16> b, PeAccumulator& acc) const {
  TESSERA_CHECK(a.size() == b.size(), "TermPe::step: A and B lane counts differ");
  TESSERA_CHECK(a.size() <= static_cast<size_t>(m_cfg.lanes),
                "TermPe::step: more pairs than lanes");
  const int n = static_cast<int>(a.size());
  std::array<detail::TermOperand, kMaxPeLanes> da, db;
  for (int i = 0; i < n; ++i) {
    da[i] = detail::make_operand(a[i]);
    db[i] = detail::make_operand(b[i]);
  }
  StepStats st;
  st.lane_count = m_cfg.lanes;
  st.term_cycles =
      detail::use_int64(m_cfg)
          ? detail::fast_step<int64_t>(m_cfg, da.data(), db.data(), n, acc, st.lanes.data())
          : detail::fast_step<__int128>(m_cfg, da.data(), db.data(), n, acc, st.lanes.data());
  for (int i = n; i < m_cfg.lanes; ++i) st.lanes[i] = LaneTerms{0, kTermSlots, 0};
  st.cycles = std::max(st.term_cycles, m_cfg.min_step_cycles);
  return st;
}

}  // namespace tessera::numerics
