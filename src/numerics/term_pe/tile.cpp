// The vector tile's width-independent parts (tile.h): the operand layouts, the tables the kernels
// read, which paths and widths a configuration and host allow, and the dispatch between them.
#include "numerics/term_pe/tile.h"

#include <algorithm>
#include <array>
#include <bit>
#include <vector>

#include "common/error.h"
#include "numerics/host_cpu.h"
#include "numerics/term_encoding.h"

namespace tessera::numerics::detail {

void TileOperands::resize(int serial_rows, int kp_, int x_count) {
  kp = kp_;
  xp = (x_count + 2 * kGroupPes - 2) / kGroupPes *
       kGroupPes;  // >= x_count + 7: any x0 < x_count reads 8
  const TermOperand zero = make_operand(Bf16{0});
  s_ops.assign(static_cast<size_t>(serial_rows) * kp, zero);
  s_code.assign(s_ops.size(), kZeroCode);
  p_ops.assign(static_cast<size_t>(kp) * xp, zero);
  p_code.assign(p_ops.size(), kZeroCode);
  p_word.assign(p_ops.size(), 0);
  p_signed.assign(p_ops.size(), 0);
  p_specials = 0;
}

namespace {
int32_t code_of(TermOperand op) {
  switch (op.cls()) {
    case Bf16Class::Finite:
      return op.exponent;
    case Bf16Class::Zero:
      return kZeroCode;
    default:
      return kSpecialCode;
  }
}
}  // namespace

void TileOperands::set_serial(int s, int k, TermOperand op) {
  const size_t i = static_cast<size_t>(s) * kp + k;
  s_ops[i] = op;
  s_code[i] = code_of(op);
}

void TileOperands::set_parallel(int k, int x, TermOperand op) {
  const size_t i = static_cast<size_t>(k) * xp + x;
  p_specials += (code_of(op) == kSpecialCode ? 1 : 0) - (p_code[i] == kSpecialCode ? 1 : 0);
  p_signed[i] = (op.negative() ? -op.significand : op.significand) & 0xffff;
  p_ops[i] = op;
  p_code[i] = code_of(op);
  p_word[i] = static_cast<int32_t>((op.negative() ? 0x80000000u : 0u) |
                                   (static_cast<uint32_t>(op.significand) << 18));
}

void TileOperands::pack(const std::vector<int>& x0s) {
  packed.resize(x0s.size() * kp * kGroupPes);
  int32_t* out = packed.data();
  for (const int x0 : x0s)
    for (int k = 0; k < kp; ++k)
      for (int v = 0; v < kGroupPes; ++v) {
        const size_t i = static_cast<size_t>(k) * xp + x0 + v;
        const int32_t code =
            p_code[i] == kZeroCode || p_code[i] == kSpecialCode ? kPackedZero : p_code[i];
        *out++ = static_cast<int32_t>(static_cast<uint32_t>(code) << 16) | p_signed[i];
      }
}

const std::array<std::array<uint8_t, 16>, 256>& terms_from() {
  static const std::array<std::array<uint8_t, 16>, 256> table = [] {
    std::array<std::array<uint8_t, 16>, 256> t{};
    for (int m = 0; m < 256; ++m) {
      const TermList& tl = csd_table()[m];
      for (int c = 0; c < 16; ++c)
        for (int i = 0; i < tl.count; ++i)
          t[m][c] = static_cast<uint8_t>(t[m][c] + (tl.terms[i].power >= c ? 1 : 0));
    }
    return t;
  }();
  return table;
}

const std::array<PairTerms, 512>& pair_terms() {
  static const std::array<PairTerms, 512> table = [] {
    std::array<PairTerms, 512> t{};
    for (int mb = 1; mb < 256; ++mb)
      for (const bool negative : {false, true}) {
        PairTerms& e = t[static_cast<size_t>(negative ? 512 - mb : mb)];
        const TermList& tl = csd_table()[mb];
        int adding = 0, subtracting = 0;
        for (int i = 0; i < tl.count; ++i) {
          const bool adds = (tl.terms[i].sign > 0) != negative;
          int& slot = adds ? adding : subtracting;
          TESSERA_CHECK(slot < kPairSlots, "pair_terms: too many terms of one sign");
          e.mult[slot++] |= (uint32_t{1} << (7 + tl.terms[i].power)) << (adds ? 16 : 0);
        }
      }
    return t;
  }();
  return table;
}

#if defined(__x86_64__)

bool tile_avx2_supported(const PeConfig& cfg) {
  const int lane_bits = std::bit_width(static_cast<unsigned>(cfg.lanes));  // ceil(log2(L + 1))
  // W <= 24 keeps every term shift (ma << 18) >> (18 - p - g) non-negative (p + g <= W - 6).
  return host_has_avx2() && cfg.acc_fraction_bits <= 24 &&
         cfg.acc_fraction_bits + 3 + lane_bits <= 31;
}

bool group_run_supported(const PeConfig& cfg) {
  return cfg.acc_fraction_bits <= kFullAccumulatorWidth && cfg.lanes <= kGroupPes &&
         tile_avx2_supported(cfg);
}

bool group_run_avx512_supported(const PeConfig& cfg) {
  return group_run_supported(cfg) && host_has_avx512bw();
}

void group_runs(const PeConfig& cfg, const TileOperands& ops, const SerialSteps& row, int steps,
                const RowGroup* groups, int count, GroupTotals& totals, uint8_t* done) {
  if (group_run_avx512_supported(cfg))
    group_runs_avx512(cfg, ops, row, steps, groups, count, totals, done);
  else
    group_runs_avx2(cfg, ops, row, steps, groups, count, totals, done);
}

#else

bool tile_avx2_supported(const PeConfig&) {
  return false;
}
bool group_run_supported(const PeConfig&) {
  return false;
}
bool group_run_avx512_supported(const PeConfig&) {
  return false;
}

void group_runs(const PeConfig& cfg, const TileOperands& ops, const SerialSteps& row, int steps,
                const RowGroup* groups, int count, GroupTotals& totals, uint8_t* done) {
  group_runs_avx2(cfg, ops, row, steps, groups, count, totals, done);
}

#endif

void row_steps(const PeConfig& cfg, const TileOperands& ops, const SerialSteps& row, int s,
               int steps, const RowGroup* groups, int count, GroupTotals& totals) {
  thread_local std::vector<RowGroup> rest;
  thread_local std::vector<uint8_t> taken;
  taken.resize(static_cast<size_t>(count));
  group_runs(cfg, ops, row, steps, groups, count, totals, taken.data());
  rest.clear();
  for (int i = 0; i < count; ++i)
    if (taken[static_cast<size_t>(i)] == 0) rest.push_back(groups[i]);
  row_group_steps_avx2(cfg, ops, row, s, steps, rest.data(), static_cast<int>(rest.size()), totals);
}

}  // namespace tessera::numerics::detail
