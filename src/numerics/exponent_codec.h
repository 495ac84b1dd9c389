// Exponent base-delta encoding of tensors in memory (docs/term-serial.md, "Memory encoding").
//
// Values are floating-point bit patterns with 1 sign bit, 8 exponent bits and m mantissa bits
// (m = 7: bf16, m = 23: fp32), stored in groups of `group_size` consecutive values (the last group
// may be shorter). Lossless for every pattern (zeros, subnormals, Inf, NaN payloads included).
//
// Stream format, bits packed least significant first into bytes (bit i of the stream is bit
// i % 8 of byte i / 8), per group:
//   base      8 bits   the raw exponent field of the group's first value
//   then for each value of the group, in order:
//     sign      1 bit
//     mantissa  m bits
//     exponent  the first value: nothing (it is the base); every later value: a delta code of
//               d = delta_bits bits, the two's-complement delta (exponent field - base) when it
//               lies in [-(2^(d-1) - 1), 2^(d-1) - 1]; otherwise the escape code (the pattern
//               1 followed by d-1 zeros, i.e. -2^(d-1)) followed by the raw 8-bit exponent field.
// Size of a group of n values with x escapes: 8 + n(1 + m) + (n - 1)d + 8x bits. The stream is
// padded with zero bits to whole bytes.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "numerics/bf16.h"

namespace tessera::numerics {

struct ExponentCodecConfig {
  int group_size = 16;    // values per group, 1..4096
  int delta_bits = 3;     // d, 1..8
  int mantissa_bits = 7;  // m: 7 (bf16) or 23 (fp32), 0..23

  void validate() const;  // throws tessera::Error naming the field
};

struct EncodedTensor {
  ExponentCodecConfig cfg;
  int64_t count = 0;    // values encoded
  int64_t bits = 0;     // stream length before byte padding
  int64_t escapes = 0;  // deltas that did not fit
  std::vector<uint8_t> data;

  int64_t bytes() const { return (bits + 7) / 8; }
  int64_t raw_bits() const { return count * (9 + cfg.mantissa_bits); }
  // raw size / encoded size (1 for an empty tensor).
  double compression_ratio() const {
    return bits == 0 ? 1.0 : static_cast<double>(raw_bits()) / bits;
  }
};

// values[i]: a bit pattern of 9 + m bits in the low bits of the word (higher bits must be 0).
EncodedTensor exponent_encode(std::span<const uint32_t> values, const ExponentCodecConfig& cfg);
// Throws tessera::Error if the stream is shorter than its count and configuration require.
std::vector<uint32_t> exponent_decode(const EncodedTensor& enc);
// The encoded size in bits (before byte padding) without building the stream: what a DMA of the
// tensor moves when the encoding is on.
int64_t exponent_encoded_bits(std::span<const uint32_t> values, const ExponentCodecConfig& cfg);

// bf16 and fp32 conveniences (cfg.mantissa_bits must be 7 and 23 respectively).
EncodedTensor exponent_encode_bf16(std::span<const Bf16> values, const ExponentCodecConfig& cfg);
std::vector<Bf16> exponent_decode_bf16(const EncodedTensor& enc);
EncodedTensor exponent_encode_f32(std::span<const float> values, const ExponentCodecConfig& cfg);
std::vector<float> exponent_decode_f32(const EncodedTensor& enc);

}  // namespace tessera::numerics
