#include "numerics/term_tile_avx2.h"

#include <algorithm>
#include <array>
#include <bit>

#include "common/error.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tessera::numerics::detail {

void TileOperands::resize(int serial_rows, int kp_, int x_count) {
  kp = kp_;
  xp = (x_count + 2 * kGroupPes - 2) / kGroupPes * kGroupPes;  // >= x_count + 7: any x0 < x_count reads 8
  const TermOperand zero = make_operand(Bf16{0});
  s_ops.assign(static_cast<size_t>(serial_rows) * kp, zero);
  s_code.assign(s_ops.size(), kZeroCode);
  p_ops.assign(static_cast<size_t>(kp) * xp, zero);
  p_code.assign(p_ops.size(), kZeroCode);
  p_word.assign(p_ops.size(), 0);
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
  p_ops[i] = op;
  p_code[i] = code_of(op);
  p_word[i] = static_cast<int32_t>((op.negative() ? 0x80000000u : 0u) | (static_cast<uint32_t>(op.significand) << 18));
}

#if defined(__x86_64__)

bool tile_avx2_supported(const PeConfig& cfg) {
  static const bool has = __builtin_cpu_supports("avx2");
  const int lane_bits = std::bit_width(static_cast<unsigned>(cfg.lanes));  // ceil(log2(L + 1))
  // W <= 24 keeps every term shift (ma << 18) >> (18 - p - g) non-negative (p + g <= W - 6).
  return has && cfg.acc_fraction_bits <= 24 && cfg.acc_fraction_bits + 3 + lane_bits <= 31;
}

namespace {

__attribute__((target("avx2"))) inline __m256i ld(const int32_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// The accumulators of a group as vectors (finite state only; Inf/NaN make the group scalar).
struct VectorAcc {
  __m256i exponent, significand, negative, zero;  // negative, zero: all-ones masks
};

__attribute__((target("avx2"))) VectorAcc to_vectors(const std::array<PeAccumulator, kGroupPes>& st) {
  alignas(32) int32_t e[kGroupPes], s[kGroupPes], n[kGroupPes], z[kGroupPes];
  for (int v = 0; v < kGroupPes; ++v) {
    const bool finite = st[v].kind == PeAccumulator::Kind::Finite;
    e[v] = finite ? st[v].exponent : 0;
    s[v] = finite ? static_cast<int32_t>(st[v].significand) : 0;
    n[v] = st[v].negative ? -1 : 0;
    z[v] = finite ? 0 : -1;
  }
  return VectorAcc{ld(e), ld(s), ld(n), ld(z)};
}

__attribute__((target("avx2"))) void from_vectors(const VectorAcc& va, std::array<PeAccumulator, kGroupPes>& st) {
  alignas(32) int32_t e[kGroupPes], s[kGroupPes], n[kGroupPes], z[kGroupPes];
  _mm256_store_si256(reinterpret_cast<__m256i*>(e), va.exponent);
  _mm256_store_si256(reinterpret_cast<__m256i*>(s), va.significand);
  _mm256_store_si256(reinterpret_cast<__m256i*>(n), va.negative);
  _mm256_store_si256(reinterpret_cast<__m256i*>(z), va.zero);
  for (int v = 0; v < kGroupPes; ++v) {
    st[v] = z[v] != 0 ? PeAccumulator{PeAccumulator::Kind::Zero, n[v] != 0, 0, 0}
                      : PeAccumulator{PeAccumulator::Kind::Finite, n[v] != 0, e[v], static_cast<uint32_t>(s[v])};
  }
}

__attribute__((target("avx2"))) inline int hsum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

struct GroupContext {
  const PeConfig& cfg;
  const TileOperands& ops;
  int s, x0, valid, steps;
  int* cycles;
};

// One step of every valid PE of the group through the scalar fast_step. Returns the cycles sum.
int64_t scalar_step(const GroupContext& g, int j, std::array<PeAccumulator, kGroupPes>& st, int64_t& processed,
                    int64_t& nonzero) {
  const int L = g.cfg.lanes;
  const int64_t k0 = int64_t{j} * L;
  std::array<TermOperand, kMaxPeLanes> a;
  std::array<LaneTerms, kMaxPeLanes> lanes;
  int64_t cycle_sum = 0;
  for (int v = 0; v < g.valid; ++v) {
    for (int i = 0; i < L; ++i) a[i] = g.ops.p_ops[static_cast<size_t>(k0 + i) * g.ops.xp + g.x0 + v];
    const TermOperand* b = &g.ops.s_ops[static_cast<size_t>(g.s) * g.ops.kp + k0];
    const int c = std::max(fast_step<int64_t>(g.cfg, a.data(), b, L, st[v], lanes.data()), g.cfg.min_step_cycles);
    for (int i = 0; i < L; ++i) {
      processed += lanes[i].processed;
      nonzero += lanes[i].processed + lanes[i].skipped_oob;
    }
    g.cycles[static_cast<size_t>(v) * g.steps + j] = c;
    cycle_sum += c;
  }
  return cycle_sum;
}

// Normalises the window sums `sum` (units 2^(E - W)) into the accumulators (contract step 5);
// returns the mask of accumulators that overflowed (left as garbage: the caller makes them Inf).
__attribute__((target("avx2"))) __m256i normalise(__m256i sum, __m256i E, __m256i zero_negative, const PeConfig& cfg,
                                                  VectorAcc& acc) {
  const int W = cfg.acc_fraction_bits;
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i nonzero = _mm256_xor_si256(_mm256_cmpeq_epi32(sum, _mm256_setzero_si256()), _mm256_set1_epi32(-1));
  const __m256i mag = _mm256_abs_epi32(sum);
  // Leading bit: the float exponent, less one where the conversion rounded up to a power of two.
  __m256i lead =
      _mm256_sub_epi32(_mm256_srli_epi32(_mm256_castps_si256(_mm256_cvtepi32_ps(mag)), 23), _mm256_set1_epi32(127));
  lead = _mm256_add_epi32(lead, _mm256_cmpgt_epi32(_mm256_sllv_epi32(one, lead), mag));
  __m256i s = _mm256_sub_epi32(lead, _mm256_set1_epi32(W));
  const __m256i right = _mm256_cmpgt_epi32(s, _mm256_setzero_si256());
  __m256i q_right = _mm256_srlv_epi32(mag, s);
  const __m256i rem = _mm256_and_si256(mag, _mm256_sub_epi32(_mm256_sllv_epi32(one, s), one));
  const __m256i half = _mm256_sllv_epi32(one, _mm256_sub_epi32(s, one));
  const __m256i odd = _mm256_cmpeq_epi32(_mm256_and_si256(q_right, one), one);
  const __m256i up =
      _mm256_or_si256(_mm256_cmpgt_epi32(rem, half), _mm256_and_si256(_mm256_cmpeq_epi32(rem, half), odd));
  q_right = _mm256_sub_epi32(q_right, up);
  const __m256i q_left = _mm256_sllv_epi32(mag, _mm256_sub_epi32(_mm256_setzero_si256(), s));
  __m256i q = _mm256_blendv_epi8(q_left, q_right, right);
  const __m256i carry = _mm256_cmpgt_epi32(q, _mm256_set1_epi32((1 << (W + 1)) - 1));
  q = _mm256_blendv_epi8(q, _mm256_srli_epi32(q, 1), carry);
  s = _mm256_sub_epi32(s, carry);
  const __m256i exponent = _mm256_add_epi32(E, s);
  acc.negative = _mm256_blendv_epi8(zero_negative, _mm256_srai_epi32(sum, 31), nonzero);
  acc.zero = _mm256_xor_si256(nonzero, _mm256_set1_epi32(-1));
  acc.exponent = _mm256_and_si256(exponent, nonzero);
  acc.significand = _mm256_and_si256(q, nonzero);
  return _mm256_and_si256(_mm256_cmpgt_epi32(exponent, _mm256_set1_epi32(cfg.acc_max_exponent)), nonzero);
}

}  // namespace

__attribute__((target("avx2"))) void group_steps_avx2(const PeConfig& cfg, const TileOperands& ops, int s, int x0,
                                                      int valid, int steps, PeAccumulator* acc_io, int* cycles,
                                                      GroupTotals& totals) {
  using Kind = PeAccumulator::Kind;
  TESSERA_CHECK(valid >= 1 && valid <= kGroupPes && tile_avx2_supported(cfg), "group_steps_avx2: bad group");
  const GroupContext g{cfg, ops, s, x0, valid, steps, cycles};
  const int W = cfg.acc_fraction_bits, L = cfg.lanes, xp = ops.xp;
  const int32_t* s_code = ops.s_code.data() + static_cast<size_t>(s) * ops.kp;
  const TermOperand* s_ops = ops.s_ops.data() + static_cast<size_t>(s) * ops.kp;
  const int32_t* p_code = ops.p_code.data() + x0;
  const int32_t* p_word = ops.p_word.data() + x0;
  const auto& table = csd_table();

  std::array<PeAccumulator, kGroupPes> st;
  bool scalar_mode = false;
  for (int v = 0; v < kGroupPes; ++v) {
    st[v] = v < valid ? acc_io[v] : PeAccumulator{};
    scalar_mode = scalar_mode || st[v].kind == Kind::Inf || st[v].kind == Kind::NaN;
  }
  VectorAcc va = to_vectors(st);
  const __m256i valid_mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(valid), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const __m256i live_floor = _mm256_set1_epi32(-(1 << 19)), special_floor = _mm256_set1_epi32((1 << 19) - 1);
  const __m256i bound = _mm256_set1_epi32(26), magnitude = _mm256_set1_epi32(0x7fffffff);
  const __m256i min_cycles = _mm256_set1_epi32(cfg.min_step_cycles);
  __m256i processed_acc = _mm256_setzero_si256(), nonzero_acc = _mm256_setzero_si256();
  int64_t processed = 0, nonzero = 0, cycle_sum = 0;

  for (int j = 0; j < steps; ++j) {
    const int64_t k0 = int64_t{j} * L;
    __m256i pe_max = _mm256_set1_epi32(2 * kZeroCode);
    for (int i = 0; i < L; ++i)
      pe_max =
          _mm256_max_epi32(pe_max, _mm256_add_epi32(ld(p_code + (k0 + i) * xp), _mm256_set1_epi32(s_code[k0 + i])));
    const __m256i special = _mm256_and_si256(_mm256_cmpgt_epi32(pe_max, special_floor), valid_mask);
    if (scalar_mode || !_mm256_testz_si256(special, special)) {
      if (!scalar_mode) from_vectors(va, st);
      cycle_sum += scalar_step(g, j, st, processed, nonzero);
      scalar_mode = std::any_of(st.begin(), st.end(), [](const PeAccumulator& a) {
        return a.kind == PeAccumulator::Kind::Inf || a.kind == PeAccumulator::Kind::NaN;
      });
      if (!scalar_mode) va = to_vectors(st);
      continue;
    }
    const __m256i any_live = _mm256_cmpgt_epi32(pe_max, live_floor);
    const __m256i finite = _mm256_xor_si256(va.zero, _mm256_set1_epi32(-1));
    __m256i E = _mm256_blendv_epi8(va.exponent, pe_max, any_live);
    E = _mm256_blendv_epi8(E, _mm256_max_epi32(E, va.exponent), finite);
    const __m256i base = _mm256_add_epi32(E, _mm256_set1_epi32(32 - W));
    __m256i value = _mm256_setzero_si256(), proc_max = _mm256_setzero_si256();
    __m256i all_negative = _mm256_set1_epi32(-1);
    for (int i = 0; i < L; ++i) {
      const TermOperand b = s_ops[k0 + i];
      const __m256i wa = ld(p_word + (k0 + i) * xp);
      const __m256i lane_negative =
          _mm256_srai_epi32(_mm256_xor_si256(wa, _mm256_set1_epi32(b.negative() ? INT32_MIN : 0)), 31);
      all_negative = _mm256_and_si256(all_negative, lane_negative);
      if (b.cls() != Bf16Class::Finite) continue;  // a zero B: no terms
      const TermList& tl = table[b.significand];
      const __m256i pe = _mm256_add_epi32(ld(p_code + (k0 + i) * xp), _mm256_set1_epi32(b.exponent));
      const __m256i q = _mm256_sub_epi32(base, pe);
      const __m256i ma18 = _mm256_and_si256(wa, magnitude);
      __m256i lane_value = _mm256_setzero_si256(), lane_processed = _mm256_setzero_si256();
      for (int t = 0; t < tl.count; ++t) {
        const __m256i amount = _mm256_sub_epi32(q, _mm256_set1_epi32(tl.terms[t].power));
        lane_value = _mm256_add_epi32(
            lane_value, _mm256_sign_epi32(_mm256_srlv_epi32(ma18, amount), _mm256_set1_epi32(tl.terms[t].sign)));
        lane_processed = _mm256_sub_epi32(lane_processed, _mm256_cmpgt_epi32(bound, amount));
      }
      value = _mm256_add_epi32(value, _mm256_sub_epi32(_mm256_xor_si256(lane_value, lane_negative), lane_negative));
      proc_max = _mm256_max_epi32(proc_max, lane_processed);
      processed_acc = _mm256_add_epi32(processed_acc, _mm256_and_si256(lane_processed, valid_mask));
      const __m256i live = _mm256_cmpgt_epi32(pe, live_floor);
      nonzero_acc = _mm256_add_epi32(nonzero_acc,
                                     _mm256_and_si256(_mm256_set1_epi32(tl.count), _mm256_and_si256(live, valid_mask)));
    }
    const __m256i aligned =
        _mm256_and_si256(_mm256_srlv_epi32(va.significand, _mm256_sub_epi32(E, va.exponent)), finite);
    const __m256i sum = _mm256_add_epi32(value, _mm256_sub_epi32(_mm256_xor_si256(aligned, va.negative), va.negative));
    const __m256i zero_negative =
        _mm256_andnot_si256(any_live, _mm256_and_si256(_mm256_and_si256(va.zero, va.negative), all_negative));
    const __m256i overflow = _mm256_and_si256(normalise(sum, E, zero_negative, cfg, va), valid_mask);
    alignas(32) int32_t c[kGroupPes];
    _mm256_store_si256(reinterpret_cast<__m256i*>(c), _mm256_max_epi32(proc_max, min_cycles));
    for (int v = 0; v < valid; ++v) {
      cycles[static_cast<size_t>(v) * steps + j] = c[v];
      cycle_sum += c[v];
    }
    if (!_mm256_testz_si256(overflow, overflow)) {
      alignas(32) int32_t o[kGroupPes];
      _mm256_store_si256(reinterpret_cast<__m256i*>(o), overflow);
      from_vectors(va, st);
      for (int v = 0; v < kGroupPes; ++v)
        if (o[v] != 0) st[v] = PeAccumulator{Kind::Inf, st[v].negative, 0, 0};
      scalar_mode = true;
    }
  }
  if (!scalar_mode) from_vectors(va, st);
  processed += hsum(processed_acc);
  nonzero += hsum(nonzero_acc);
  totals.processed += processed;
  totals.skipped_oob += nonzero - processed;
  totals.skipped_zero += int64_t{steps} * valid * L * kTermSlots - nonzero;
  totals.lane_idle += int64_t{L} * cycle_sum - processed;
  for (int v = 0; v < valid; ++v) acc_io[v] = st[v];
}

#else

bool tile_avx2_supported(const PeConfig&) { return false; }

void group_steps_avx2(const PeConfig&, const TileOperands&, int, int, int, int, PeAccumulator*, int*, GroupTotals&) {
  TESSERA_CHECK(false, "group_steps_avx2: no AVX2 on this host");
}

#endif

}  // namespace tessera::numerics::detail
