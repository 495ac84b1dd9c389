#include "numerics/term_pe_simd.h"

#include <algorithm>
#include <bit>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tessera::numerics::detail {

void TermLanesSoA::resize(int rows, int kp_, bool serial_) {
  kp = kp_;
  serial = serial_;
  const size_t n = static_cast<size_t>(rows) * kp;
  ops.assign(n, make_operand(Bf16{0}));
  code.assign(n, kZeroCode);
  word.assign(n, 0);
  for (int t = 0; t < kMaxTerms; ++t) {
    power[t].assign(serial ? n : 0, -64);
    sign[t].assign(serial ? n : 0, 0);
  }
}

void TermLanesSoA::set(int row, int k, TermOperand op) {
  const size_t i = static_cast<size_t>(row) * kp + k;
  ops[i] = op;
  const Bf16Class cls = op.cls();
  code[i] = cls == Bf16Class::Finite ? op.exponent : cls == Bf16Class::Zero ? kZeroCode : kSpecialCode;
  const uint32_t sign_bit = op.negative() ? 0x80000000u : 0u;
  const TermList& tl = csd_table()[op.significand];
  if (!serial) {
    word[i] = static_cast<int32_t>(sign_bit | (static_cast<uint32_t>(op.significand) << 18));
    return;
  }
  word[i] = static_cast<int32_t>(sign_bit | tl.count);
  for (int t = 0; t < tl.count; ++t) {
    power[t][i] = tl.terms[t].power;
    sign[t][i] = tl.terms[t].sign;
  }
}

#if defined(__x86_64__)

bool host_has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}

namespace {

__attribute__((target("avx2"))) inline int hsum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

__attribute__((target("avx2"))) inline int hmax(__m256i v) {
  __m128i s = _mm_max_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_max_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_max_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

__attribute__((target("avx2"))) inline __m256i load(const int32_t* v, int64_t i) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + i));
}

// Raw views of a TermLanesSoA, held in locals so the hot loop never reloads vector pointers.
struct SoAView {
  const int32_t* code;
  const int32_t* word;
  const int32_t* power[kMaxTerms];
  const int32_t* sign[kMaxTerms];
  explicit SoAView(const TermLanesSoA& s) : code(s.code.data()), word(s.word.data()), power{}, sign{} {
    for (int t = 0; t < kMaxTerms && s.serial; ++t) {
      power[t] = s.power[t].data();
      sign[t] = s.sign[t].data();
    }
  }
};

// Lane values (units 2^(E - W), before the product sign) and processed-term counts of one step.
__attribute__((target("avx2"))) inline void lane_values(const SoAView& b, int64_t bi, __m256i ma18,
                                                         __m256i q, __m256i& value, __m256i& processed) {
  const __m256i bound = _mm256_set1_epi32(26);
  value = _mm256_setzero_si256();
  processed = _mm256_setzero_si256();
  for (int t = 0; t < kMaxTerms; ++t) {
    const __m256i amount = _mm256_sub_epi32(q, load(b.power[t], bi));
    const __m256i term = _mm256_sign_epi32(_mm256_srlv_epi32(ma18, amount), load(b.sign[t], bi));
    value = _mm256_add_epi32(value, term);
    processed = _mm256_sub_epi32(processed, _mm256_cmpgt_epi32(bound, amount));
  }
}

// The accumulator of one PE while its steps run: the finite state in 64 bits (W <= 24).
struct LocalAcc {
  PeAccumulator::Kind kind;
  bool negative;
  int exponent;
  uint64_t significand;

  explicit LocalAcc(const PeAccumulator& a)
      : kind(a.kind), negative(a.negative), exponent(a.exponent), significand(static_cast<uint64_t>(a.significand)) {}
  PeAccumulator get() const { return PeAccumulator{kind, negative, exponent, significand}; }
};

// normalise_into (term_pe_fast.h) in 64-bit arithmetic.
inline void normalise64(int64_t sum, int E, const PeConfig& cfg, LocalAcc& acc) {
  const int W = cfg.acc_fraction_bits;
  acc.negative = sum < 0;
  const uint64_t mag = acc.negative ? static_cast<uint64_t>(-sum) : static_cast<uint64_t>(sum);
  const int lead = 63 - std::countl_zero(mag);
  uint64_t sig;
  int exponent;
  if (lead > W) {
    const int s = lead - W;
    sig = mag >> s;
    const uint64_t rem = mag & ((uint64_t{1} << s) - 1), half = uint64_t{1} << (s - 1);
    sig += static_cast<uint64_t>((rem > half) | ((rem == half) & ((sig & 1) != 0)));
    exponent = E + s;
    if ((sig >> (W + 1)) != 0) {
      sig >>= 1;
      ++exponent;
    }
  } else {
    sig = mag << (W - lead);
    exponent = E - (W - lead);
  }
  if (exponent > cfg.acc_max_exponent) {
    acc.kind = PeAccumulator::Kind::Inf;
    acc.exponent = 0;
    acc.significand = 0;
    return;
  }
  acc.kind = PeAccumulator::Kind::Finite;
  acc.exponent = exponent;
  acc.significand = sig;
}

}  // namespace

__attribute__((target("avx2"))) void pe_steps_avx2(const PeConfig& cfg, const TermLanesSoA& a,
                                                    const TermLanesSoA& b, int pes, const int64_t* a0,
                                                    const int64_t* b0, PeAccumulator* acc_io, int steps,
                                                    int* cycles, int64_t* processed_total, int64_t* skipped_zero,
                                                    int64_t* skipped_oob, int64_t* lane_idle) {
  using Kind = PeAccumulator::Kind;
  const int W = cfg.acc_fraction_bits;
  const SoAView av(a), bv(b);
  constexpr int kLiveFloor = -(1 << 19), kSpecialFloor = 1 << 19;
  const __m256i magnitude = _mm256_set1_epi32(0x7fffffff), seven = _mm256_set1_epi32(7);
  std::vector<LocalAcc> accs(acc_io, acc_io + pes);
  __m256i processed_acc = _mm256_setzero_si256(), nonzero_acc = _mm256_setzero_si256();
  int64_t scalar_processed = 0, scalar_nonzero = 0, cycle_sum = 0;
  std::array<LaneTerms, kMaxPeLanes> lanes;
  for (int j = 0; j < steps; ++j) {
    for (int p = 0; p < pes; ++p) {  // independent accumulators: their dependency chains overlap
      LocalAcc& acc = accs[p];
      const int64_t ai = a0[p] + int64_t{j} * kSimdLanes, bi = b0[p] + int64_t{j} * kSimdLanes;
      int term_cycles;
      const __m256i pe = _mm256_add_epi32(load(av.code, ai), load(bv.code, bi));
      const int pe_max = hmax(pe);
      if (pe_max >= kSpecialFloor || acc.kind == Kind::Inf || acc.kind == Kind::NaN) {
        PeAccumulator full = acc.get();
        term_cycles = fast_step<int64_t>(cfg, &a.ops[ai], &b.ops[bi], kSimdLanes, full, lanes.data());
        acc = LocalAcc(full);
        for (int i = 0; i < kSimdLanes; ++i) {
          scalar_processed += lanes[i].processed;
          scalar_nonzero += lanes[i].processed + lanes[i].skipped_oob;
        }
      } else {
        const bool any_live = pe_max > kLiveFloor;
        int E = any_live ? pe_max : acc.exponent;
        if (acc.kind == Kind::Finite) E = std::max(E, acc.exponent);
        const __m256i q = _mm256_sub_epi32(_mm256_set1_epi32(32 - W + E), pe);
        const __m256i wa = load(av.word, ai), wb = load(bv.word, bi);
        __m256i value, processed;
        lane_values(bv, bi, _mm256_and_si256(wa, magnitude), q, value, processed);
        const __m256i live = _mm256_cmpgt_epi32(pe, _mm256_set1_epi32(kLiveFloor));
        const __m256i count = _mm256_and_si256(_mm256_and_si256(wb, seven), live);
        const __m256i negative = _mm256_srai_epi32(_mm256_xor_si256(wa, wb), 31);
        value = _mm256_sub_epi32(_mm256_xor_si256(value, negative), negative);
        term_cycles = hmax(processed);
        processed_acc = _mm256_add_epi32(processed_acc, processed);
        nonzero_acc = _mm256_add_epi32(nonzero_acc, count);
        int64_t sum = hsum(value);
        if (acc.kind == Kind::Finite) {
          const int sh = E - acc.exponent;
          if (sh <= W + 1) {
            const auto aligned = static_cast<int64_t>(acc.significand >> sh);
            sum += acc.negative ? -aligned : aligned;
          }
        }
        if (sum != 0) {
          normalise64(sum, E, cfg, acc);
        } else {
          const bool all_negative_zero = _mm256_movemask_ps(_mm256_castsi256_ps(negative)) == 0xff;
          acc.negative = !any_live && acc.kind == Kind::Zero && acc.negative && all_negative_zero;
          acc.kind = Kind::Zero;
          acc.exponent = 0;
          acc.significand = 0;
        }
      }
      const int c = std::max(term_cycles, cfg.min_step_cycles);
      cycles[static_cast<size_t>(p) * steps + j] = c;
      cycle_sum += c;
    }
  }
  const int64_t processed_sum = scalar_processed + hsum(processed_acc);
  const int64_t nonzero_sum = scalar_nonzero + hsum(nonzero_acc);
  *processed_total += processed_sum;
  *skipped_oob += nonzero_sum - processed_sum;
  *skipped_zero += int64_t{steps} * pes * kSimdLanes * kTermSlots - nonzero_sum;
  *lane_idle += int64_t{kSimdLanes} * cycle_sum - processed_sum;
  for (int p = 0; p < pes; ++p) acc_io[p] = accs[p].get();
}

#else

bool host_has_avx2() { return false; }

void pe_steps_avx2(const PeConfig&, const TermLanesSoA&, const TermLanesSoA&, int, const int64_t*,
                   const int64_t*, PeAccumulator*, int, int*, int64_t*, int64_t*, int64_t*, int64_t*) {
  TESSERA_CHECK(false, "pe_steps_avx2: no AVX2 on this host");
}

#endif

}  // namespace tessera::numerics::detail
