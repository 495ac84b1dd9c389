#include "numerics/term_pe/reference.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/error.h"

namespace tessera::numerics {

namespace {

// Arbitrary-precision signed integer, sign and magnitude; magnitude in 32-bit limbs, least
// significant first, no leading zero limbs (zero = no limbs, never negative).
class BigInt {
 public:
  BigInt() = default;
  static BigInt from_u128(unsigned __int128 v) {
    BigInt r;
    for (; v != 0; v >>= 32) r.m_limbs.push_back(static_cast<uint32_t>(v));
    return r;
  }

  bool is_zero() const { return m_limbs.empty(); }
  bool negative() const { return m_negative; }
  BigInt negated() const {
    BigInt r = *this;
    if (!r.is_zero()) r.m_negative = !r.m_negative;
    return r;
  }

  int bit_length() const {
    if (m_limbs.empty()) return 0;
    int top = 0;
    for (uint32_t v = m_limbs.back(); v != 0; v >>= 1) ++top;
    return 32 * static_cast<int>(m_limbs.size() - 1) + top;
  }
  bool bit(int i) const {
    const size_t limb = static_cast<size_t>(i) / 32;
    return limb < m_limbs.size() && ((m_limbs[limb] >> (i % 32)) & 1u) != 0;
  }
  bool any_bit_below(int i) const {
    for (size_t limb = 0; limb < m_limbs.size() && static_cast<int>(32 * limb) < i; ++limb) {
      const int bits = std::min(32, i - static_cast<int>(32 * limb));
      const uint32_t mask = bits == 32 ? ~0u : (1u << bits) - 1;
      if ((m_limbs[limb] & mask) != 0) return true;
    }
    return false;
  }

  // Magnitude * 2^n (n >= 0), sign kept.
  BigInt shifted_left(int n) const {
    BigInt r;
    r.m_negative = m_negative;
    if (is_zero()) return r;
    const int words = n / 32, bits = n % 32;
    r.m_limbs.assign(static_cast<size_t>(words), 0);
    uint32_t carry = 0;
    for (uint32_t limb : m_limbs) {
      r.m_limbs.push_back(bits == 0 ? limb : (limb << bits) | carry);
      carry = bits == 0 ? 0 : limb >> (32 - bits);
    }
    if (carry != 0) r.m_limbs.push_back(carry);
    return r;
  }
  // floor(magnitude / 2^n) (n >= 0), sign kept: truncation of the magnitude toward zero.
  BigInt shifted_right(int n) const {
    BigInt r;
    const size_t words = static_cast<size_t>(n / 32);
    const int bits = n % 32;
    for (size_t i = words; i < m_limbs.size(); ++i) {
      const uint32_t high = i + 1 < m_limbs.size() ? m_limbs[i + 1] : 0;
      r.m_limbs.push_back(bits == 0 ? m_limbs[i] : (m_limbs[i] >> bits) | (high << (32 - bits)));
    }
    r.trim();
    r.m_negative = m_negative && !r.is_zero();
    return r;
  }

  unsigned __int128 magnitude_u128() const {
    TESSERA_CHECK(bit_length() <= 128, "BigInt: magnitude exceeds 128 bits");
    unsigned __int128 v = 0;
    for (size_t i = m_limbs.size(); i-- > 0;) v = (v << 32) | m_limbs[i];
    return v;
  }

  friend BigInt operator+(const BigInt& x, const BigInt& y) {
    if (x.m_negative == y.m_negative) {
      BigInt r = add_magnitudes(x, y);
      r.m_negative = x.m_negative && !r.is_zero();
      return r;
    }
    const int c = compare_magnitudes(x, y);
    if (c == 0) return BigInt{};
    BigInt r = c > 0 ? sub_magnitudes(x, y) : sub_magnitudes(y, x);
    r.m_negative = c > 0 ? x.m_negative : y.m_negative;
    return r;
  }

 private:
  void trim() {
    while (!m_limbs.empty() && m_limbs.back() == 0) m_limbs.pop_back();
  }
  static int compare_magnitudes(const BigInt& x, const BigInt& y) {
    if (x.m_limbs.size() != y.m_limbs.size()) return x.m_limbs.size() > y.m_limbs.size() ? 1 : -1;
    for (size_t i = x.m_limbs.size(); i-- > 0;)
      if (x.m_limbs[i] != y.m_limbs[i]) return x.m_limbs[i] > y.m_limbs[i] ? 1 : -1;
    return 0;
  }
  static BigInt add_magnitudes(const BigInt& x, const BigInt& y) {
    BigInt r;
    uint64_t carry = 0;
    for (size_t i = 0; i < std::max(x.m_limbs.size(), y.m_limbs.size()); ++i) {
      const uint64_t s = carry + (i < x.m_limbs.size() ? x.m_limbs[i] : 0) +
                         (i < y.m_limbs.size() ? y.m_limbs[i] : 0);
      r.m_limbs.push_back(static_cast<uint32_t>(s));
      carry = s >> 32;
    }
    if (carry != 0) r.m_limbs.push_back(static_cast<uint32_t>(carry));
    r.trim();
    return r;
  }
  // |x| - |y| for |x| >= |y|.
  static BigInt sub_magnitudes(const BigInt& x, const BigInt& y) {
    BigInt r;
    int64_t borrow = 0;
    for (size_t i = 0; i < x.m_limbs.size(); ++i) {
      int64_t d =
          static_cast<int64_t>(x.m_limbs[i]) - borrow - (i < y.m_limbs.size() ? y.m_limbs[i] : 0);
      borrow = d < 0 ? 1 : 0;
      if (d < 0) d += int64_t{1} << 32;
      r.m_limbs.push_back(static_cast<uint32_t>(d));
    }
    r.trim();
    return r;
  }

  std::vector<uint32_t> m_limbs;
  bool m_negative = false;
};

enum class LaneKind { Live, Zero, Special };

struct Lane {
  Bf16Fields a, b;
  LaneKind kind = LaneKind::Zero;
  bool product_negative = false;
  int product_exponent = 0;
};

}  // namespace

StepStats reference_step(const PeConfig& cfg, std::span<const Bf16> a, std::span<const Bf16> b,
                         PeAccumulator& acc) {
  using Kind = PeAccumulator::Kind;
  cfg.validate();
  TESSERA_CHECK(a.size() == b.size() && a.size() <= static_cast<size_t>(cfg.lanes),
                "reference_step: bad lane count");
  const int W = cfg.acc_fraction_bits;

  // Decode; every lane of the PE, the missing ones fed with +0 * +0.
  std::vector<Lane> lanes(cfg.lanes);
  for (int i = 0; i < cfg.lanes; ++i) {
    Lane& l = lanes[i];
    l.a = decode_bf16(i < static_cast<int>(a.size()) ? a[i] : Bf16{0});
    l.b = decode_bf16(i < static_cast<int>(b.size()) ? b[i] : Bf16{0});
    l.product_negative = l.a.negative != l.b.negative;
    const bool special = l.a.cls == Bf16Class::Inf || l.a.cls == Bf16Class::NaN ||
                         l.b.cls == Bf16Class::Inf || l.b.cls == Bf16Class::NaN;
    const bool zero = l.a.cls == Bf16Class::Zero || l.b.cls == Bf16Class::Zero;
    l.kind = special ? LaneKind::Special : zero ? LaneKind::Zero : LaneKind::Live;
  }

  // Special values.
  bool nan = acc.kind == Kind::NaN, pos_inf = false, neg_inf = false;
  if (acc.kind == Kind::Inf) (acc.negative ? neg_inf : pos_inf) = true;
  for (const Lane& l : lanes) {
    if (l.kind != LaneKind::Special) continue;
    if (l.a.cls == Bf16Class::NaN || l.b.cls == Bf16Class::NaN)
      nan = true;
    else if (l.a.cls == Bf16Class::Zero || l.b.cls == Bf16Class::Zero)
      nan = true;  // Inf * 0
    else
      (l.product_negative ? neg_inf : pos_inf) = true;
  }

  // 1. Exponents: add per lane, find the maximum, compare with the accumulator's.
  bool any_live = false;
  int max_exponent = 0;
  for (Lane& l : lanes) {
    if (l.kind != LaneKind::Live) continue;
    l.product_exponent = l.a.exponent + l.b.exponent;
    if (!any_live || l.product_exponent > max_exponent) max_exponent = l.product_exponent;
    any_live = true;
  }
  if (acc.kind == Kind::Finite && (!any_live || acc.exponent > max_exponent))
    max_exponent = acc.exponent;
  const bool any_finite = any_live || acc.kind == Kind::Finite;
  if (cfg.fixed_exponent_mode && (!any_finite || cfg.fixed_exponent > max_exponent))
    max_exponent = cfg.fixed_exponent;

  // 2-4. Terms: shift amounts, skipping, adder tree (units of the window's LSB 2^(E - W)).
  StepStats st;
  st.lane_count = cfg.lanes;
  BigInt partial;
  for (int i = 0; i < cfg.lanes; ++i) {
    const Lane& l = lanes[i];
    LaneTerms& counts = st.lanes[i];
    if (l.kind != LaneKind::Live) {
      counts.skipped_zero = kTermSlots;
      continue;
    }
    const TermList terms = csd_encode(l.b.significand);
    counts.skipped_zero = static_cast<uint8_t>(kTermSlots - terms.count);
    for (int t = 0; t < terms.count; ++t) {
      const int d = (max_exponent - l.product_exponent) + (7 - terms.terms[t].power);
      if (d > W) {
        ++counts.skipped_oob;
        continue;
      }
      ++counts.processed;
      // A's significand, its leading bit (bit 7) moved to weight 2^(E - d): position W - d in
      // window units, i.e. shifted by W - d - 7.
      BigInt shifted = BigInt::from_u128(l.a.significand);
      const int shift = W - d - 7;
      shifted = shift >= 0 ? shifted.shifted_left(shift) : shifted.shifted_right(-shift);
      const bool term_negative = l.product_negative != (terms.terms[t].sign < 0);
      partial = partial + (term_negative ? shifted.negated() : shifted);
    }
    st.term_cycles = std::max(st.term_cycles, static_cast<int>(counts.processed));
  }
  st.cycles = std::max(st.term_cycles, cfg.min_step_cycles);

  if (nan || (pos_inf && neg_inf)) {
    acc = PeAccumulator{Kind::NaN, false, 0, 0};
    return st;
  }
  if (pos_inf || neg_inf) {
    acc = PeAccumulator{Kind::Inf, neg_inf, 0, 0};
    return st;
  }

  // 5. Align the accumulator to the window (truncating) and add.
  BigInt sum = partial;
  if (acc.kind == Kind::Finite) {
    BigInt aligned = BigInt::from_u128(acc.significand).shifted_right(max_exponent - acc.exponent);
    sum = sum + (acc.negative ? aligned.negated() : aligned);
  }
  if (sum.is_zero()) {
    bool all_negative_zero_addends = acc.kind == Kind::Zero && acc.negative;
    for (const Lane& l : lanes)
      all_negative_zero_addends =
          all_negative_zero_addends && l.kind == LaneKind::Zero && l.product_negative;
    acc = PeAccumulator{Kind::Zero, all_negative_zero_addends, 0, 0};
    return st;
  }

  // Normalise to W fraction bits below the leading one, rounding to nearest even.
  const int lead = sum.bit_length() - 1;
  int exponent = max_exponent + (lead - W);
  BigInt sig;
  if (lead <= W) {
    sig = sum.shifted_left(W - lead);
  } else {
    const int dropped = lead - W;
    sig = sum.shifted_right(dropped);
    const bool half = sum.bit(dropped - 1);
    const bool sticky = sum.any_bit_below(dropped - 1);
    if (half && (sticky || sig.bit(0)))
      sig = sig + (sig.negative() ? BigInt::from_u128(1).negated() : BigInt::from_u128(1));
    if (sig.bit_length() > W + 1) {
      sig = sig.shifted_right(1);  // 2^(W+1): the low bit is 0, nothing is lost
      ++exponent;
    }
  }
  if (exponent > cfg.acc_max_exponent) {
    acc = PeAccumulator{Kind::Inf, sum.negative(), 0, 0};
    return st;
  }
  acc = PeAccumulator{Kind::Finite, sum.negative(), exponent, sig.magnitude_u128()};
  return st;
}

}  // namespace tessera::numerics
