// The term-serial bf16 processing element (PE) of docs/term-serial.md: one step, defined
// bit-exactly, and the map of its implementations.
//
// Files (numerics/term_pe/), from the contract down to the vector instructions:
//   term_pe.h, term_pe.cpp   the step's contract (below), PeConfig, PeAccumulator, fp32 load and
//                            read-out; TermPe, the scalar model: one PE, one step at a time
//   reference.h, .cpp        reference_step: the bit-level oracle (arbitrary-precision integers)
//   scalar_step.h            fast_step: the scalar step on decoded operands (64/128-bit integers,
//                            any L and W)
//   tile.h, tile.cpp         the vector tile: groups of 8 PEs sharing their serial operand, its
//                            operand layouts, counters and tables, and the dispatch between its two
//                            paths and two vector widths
//   tile_decode.cpp          fp32 operands decoded into the tile's layouts, a serial row's lanes
//   group_steps_avx2.cpp     the tile's step-by-step path (AVX2; any operands)
//   simd_ops.h               the vector operations at two widths: Avx2Ops (8 PEs), Avx512Ops (16)
//   simd_lane_ops.h          per-vector algorithms over them (a lane's processed terms, rounding)
//   group_runs_kernel.h      the tile's lean lockstep kernel, a template over the operations
//   group_runs_avx2.cpp      that kernel instantiated for AVX2 (Avx2Ops)
//   group_runs_avx512.cpp    that kernel instantiated for AVX-512 F and BW (Avx512Ops)
//
// Call graph (who calls what; the file that holds each level in parentheses):
//   term_matmul_accumulate (numerics/term_matmul.cpp), the term-serial MXU's arithmetic:
//     if tile_avx2_supported(cfg):                                         (tile.cpp)
//       TileOperands::set_serial_row, set_parallel_row; SerialSteps::build  (tile_decode.cpp)
//       row_steps, per serial row:                                         (tile.cpp)
//         group_runs: the widest width allowed of                          (tile.cpp)
//           group_runs_avx512 | group_runs_avx2          (group_runs_avx512.cpp | _avx2.cpp)
//             group_runs_simd<Avx512Ops | Avx2Ops>                         (group_runs_kernel.h)
//         the groups they refuse: row_group_steps_avx2                     (group_steps_avx2.cpp)
//           per step: the lockstep step | the general vector step | fast_step PE by PE (Inf/NaN)
//     else: fast_step per PE and step                                      (scalar_step.h)
//   term_matmul_accumulate_reference: reference_step per PE and step       (reference.cpp)
//   TermPe::step: fast_step                                                (term_pe.cpp)
// Every path gives the same values and statistics; the tests hold each to reference_step.
//
// Per-target instantiation. A function's target attribute (__attribute__((target("avx2"))))
// cannot depend on a template parameter, so code written once over the vector operations is
// compiled once per instruction set by inclusion: an instantiating .cpp (group_runs_avx2.cpp,
// group_runs_avx512.cpp, group_steps_avx2.cpp) defines TESSERA_SIMD_TARGET as its target
// attribute and then includes the per-target headers (group_runs_kernel.h, simd_lane_ops.h), whose
// templates carry that attribute and have internal linkage: each .cpp compiles its own copy for
// its own target. Those headers refuse to compile without the macro. simd_ops.h is an ordinary
// header: each of its functions names its own target. (Compiling whole files with -mavx2 instead
// would let AVX2 instructions into inline functions the rest of the program shares.)
//
// The step.
//
// A PE has L lanes. One step takes L pairs (A_i, B_i) of bf16 values and adds sum_i A_i * B_i to
// its accumulator. B_i's significand is CSD-encoded (numerics/term_encoding.h); each non-zero term
// s * 2^p of B_i contributes A_i's significand shifted by the term. With ma, mb the 8-bit
// significands, ea, eb the exponents (value = m * 2^(e - 7)):
//
//   A_i * B_i = (-1)^(sa ^ sb) * ma * mb * 2^(pe_i - 14),   pe_i = ea + eb   (product exponent)
//
// Accumulator state (PeAccumulator): zero, +-Inf, NaN, or a finite value
//   (-1)^neg * sig * 2^(exp - W),  2^W <= sig < 2^(W+1),
// i.e. a normalised significand with W fraction bits below its leading one ("width" W =
// PeConfig::acc_fraction_bits; W = 23 is fp32's significand) and an exponent with no lower bound
// (no subnormals inside the accumulator) and the upper bound acc_max_exponent (127 = fp32's).
//
// The step (both implementations follow exactly this):
//  1. Exponents: pe_i for every lane whose product is finite and non-zero ("live" lanes); the
//     maximum pe_max; E = max(pe_max, exp of the accumulator if it is finite non-zero).
//     Fixed-exponent mode (PeConfig::fixed_exponent_mode): E = max(fixed_exponent, pe_max, exp of
//     the accumulator): the window sits at the fixed exponent unless a product or the accumulator
//     outgrows it (then it follows them as in the dynamic mode, so no value overflows the window).
//     The window of the step is every bit of weight >= 2^(E - W).
//  2. Shift amounts: term (p, s) of live lane i has d = (E - pe_i) + (7 - p): its shifted A
//     significand has its leading bit at weight 2^(E - d).
//  3. Skipping: zero digits are never processed; a term with d > W lies wholly below the window
//     ("out of bounds") and is skipped. Terms are taken most significant first, so a lane's
//     out-of-bounds terms are the tail of its list.
//  4. Adder tree: every processed term contributes s * trunc(ma * 2^(W - d - 7)) in units of
//     2^(E - W) (the shifter drops the bits that fall below the window: truncation of the
//     magnitude toward zero). An out-of-bounds term would contribute 0 by the same formula
//     (ma < 2^8), so skipping never changes the value: truncation is the only approximation.
//  5. Accumulation: the accumulator is aligned to the window (sig >> (E - exp), truncating the
//     magnitude) and added to the partial sum exactly; the sum is normalised to W fraction bits,
//     rounding to nearest, ties to even. A result with exp > acc_max_exponent becomes +-Inf.
//     An exact zero sum is +0, except that a step whose addends are all zeros (a zero
//     accumulator and only zero products) gives -0 when every one of them is -0 (IEEE).
// Specials: a NaN operand, Inf * 0, or Inf + -Inf gives NaN; Inf * finite-or-Inf gives a signed
//   Inf; NaN and Inf accumulators stay so (+Inf + -Inf -> NaN). NaN is the canonical quiet NaN.
//   Lanes with an Inf/NaN operand process no terms. Finite lanes of such a step still do their
//   terms (hardware does not know the result is lost), with E taken over live lanes only.
// Subnormals: kept, never flushed. A subnormal bf16 enters with hidden bit 0 and exponent -126;
//   its significand (1..127) is CSD-encoded like any other.
// Cycles: a lane spends one cycle per processed term; lanes move in lockstep, so a step lasts
//   term_cycles = max over lanes of processed terms, and cycles = max(term_cycles,
//   min_step_cycles) (the inputs of the next step cannot arrive sooner).
// Read-out: accumulator_to_f32 rounds the accumulator once to fp32 (nearest even, fp32
//   subnormals, overflow to Inf); with W <= 23 and exp in fp32's normal range it is exact.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "numerics/bf16.h"
#include "numerics/term_encoding.h"

namespace tessera::numerics {

inline constexpr int kMaxPeLanes = 64;
inline constexpr int kMinAccFractionBits = 4;
inline constexpr int kMaxAccFractionBits = 100;  // the fast model's 128-bit arithmetic bound
inline constexpr int kMaxFixedExponent = 400;  // |fixed_exponent| bound (products reach -266..254)

struct PeConfig {
  int lanes = 8;               // L, 1..kMaxPeLanes
  int acc_fraction_bits = 23;  // W: bits kept below the accumulator's leading one (fp32-like)
  int acc_max_exponent = 127;  // largest accumulator exponent; beyond it the result is +-Inf
  int min_step_cycles = 1;     // a step lasts at least this long, 0..8
  bool fixed_exponent_mode =
      false;               // the exponent block's result is at least fixed_exponent (step 1)
  int fixed_exponent = 0;  // product-exponent units (pe = ea + eb); |value| <= kMaxFixedExponent

  // Throws tessera::Error naming the field if a value is out of range.
  void validate() const;
};

struct PeAccumulator {
  enum class Kind : uint8_t { Zero, Finite, Inf, NaN };
  Kind kind = Kind::Zero;
  bool negative = false;
  int exponent = 0;                   // Finite only: weight of the leading one is 2^exponent
  unsigned __int128 significand = 0;  // Finite only: in [2^W, 2^(W+1))

  friend bool operator==(const PeAccumulator&, const PeAccumulator&) = default;
};

std::string to_string(const PeAccumulator& acc);

// fp32 -> accumulator (rounded to W fraction bits, nearest even; overflow past acc_max_exponent
// -> Inf) and accumulator -> fp32 (one rounding, nearest even).
PeAccumulator accumulator_from_f32(float f, const PeConfig& cfg);
float accumulator_to_f32(const PeAccumulator& acc, const PeConfig& cfg);

struct LaneTerms {
  uint8_t processed = 0;
  uint8_t skipped_zero = 0;  // zero digits of the significand (all slots for a zero/special lane)
  uint8_t skipped_oob = 0;   // out-of-bounds terms
  friend constexpr bool operator==(LaneTerms, LaneTerms) = default;
};

struct StepStats {
  int cycles = 0;       // max(term_cycles, min_step_cycles)
  int term_cycles = 0;  // max over lanes of processed terms
  int lane_count = 0;
  std::array<LaneTerms, kMaxPeLanes> lanes{};

  friend bool operator==(const StepStats&, const StepStats&) = default;
};

// The fast PE model: table-driven term lists and 64/128-bit integer arithmetic.
class TermPe {
 public:
  explicit TermPe(const PeConfig& cfg);  // validates cfg

  // One step over a.size() == b.size() <= lanes pairs; missing lanes are +0 * +0.
  StepStats step(std::span<const Bf16> a, std::span<const Bf16> b, PeAccumulator& acc) const;

  const PeConfig& config() const { return m_cfg; }

 private:
  PeConfig m_cfg;
};

}  // namespace tessera::numerics
