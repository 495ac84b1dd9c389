// bfloat16: the 16-bit float of the matrix unit (1 sign, 8 exponent, 7 fraction bits).
//
// Rounding contract (fp32 -> bf16):
//   * round to nearest, ties to even, on the 16 dropped bits;
//   * NaN stays NaN: sign and the top 7 payload bits are kept and the quiet bit is forced on, so a
//     signalling NaN never rounds into an infinity;
//   * +-Inf and +-0 are preserved exactly; finite values that round past the largest bf16
//     (0x7f7f = 3.3895e38) become +-Inf, as IEEE round-to-nearest requires.
// Subnormal policy: subnormals are KEPT, never flushed, on both sides. bf16 has the fp32 exponent
//   range, so an fp32 subnormal rounds to the nearest bf16 subnormal (or to zero / the smallest
//   normal) by the same rule. The simulator runs with the host's default IEEE mode (no FTZ/DAZ;
//   the build passes -fno-fast-math).
// bf16 -> fp32 is exact (append 16 zero bits).
#pragma once

#include <bit>
#include <cstdint>

namespace tessera::numerics {

struct Bf16 {
  uint16_t bits = 0;

  static constexpr Bf16 from_bits(uint16_t b) { return Bf16{b}; }
  friend constexpr bool operator==(Bf16, Bf16) = default;
};

constexpr Bf16 bf16_from_f32(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) {  // NaN: quiet it, keep sign and top payload
    return Bf16{static_cast<uint16_t>((u >> 16) | 0x0040u)};
  }
  const uint32_t lsb = (u >> 16) & 1u;
  return Bf16{static_cast<uint16_t>((u + 0x7fffu + lsb) >> 16)};
}

constexpr float bf16_to_f32(Bf16 b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b.bits) << 16);
}

// fp32 -> nearest bf16 -> fp32: the value the matrix unit sees for an fp32 input.
constexpr float round_to_bf16(float f) {
  return bf16_to_f32(bf16_from_f32(f));
}

// Rounds every element of `x` to bf16 precision in place (vectorised; same results as
// round_to_bf16 element by element).
void round_to_bf16(float* x, long n);

}  // namespace tessera::numerics
