#include "numerics/exponent_codec.h"

#include <algorithm>
#include <bit>

#include <fmt/format.h>

#include "common/error.h"

namespace tessera::numerics {

namespace {

void check_range(const char* field, int value, int lo, int hi) {
  if (value < lo || value > hi)
    throw Error(fmt::format("ExponentCodecConfig.{}", field),
                fmt::format("{} is out of range [{}, {}]", value, lo, hi));
}

struct Fields {
  uint32_t sign, exponent, mantissa;
};

Fields split(uint32_t v, int m) {
  return Fields{(v >> (m + 8)) & 1u, (v >> m) & 0xffu, v & ((1u << m) - 1u)};
}

int max_delta(int d) {
  return (1 << (d - 1)) - 1;
}
uint32_t escape_code(int d) {
  return 1u << (d - 1);
}

class BitWriter {
 public:
  void put(uint32_t value, int n) {
    for (int i = 0; i < n; ++i, ++m_bits) {
      if (m_bits % 8 == 0) m_data.push_back(0);
      m_data.back() |= static_cast<uint8_t>(((value >> i) & 1u) << (m_bits % 8));
    }
  }
  int64_t bits() const { return m_bits; }
  std::vector<uint8_t> take() { return std::move(m_data); }

 private:
  std::vector<uint8_t> m_data;
  int64_t m_bits = 0;
};

class BitReader {
 public:
  BitReader(const std::vector<uint8_t>& data, int64_t bits) : m_data(data), m_limit(bits) {
    if (static_cast<int64_t>(data.size()) * 8 < bits)
      throw Error("exponent codec",
                  fmt::format("stream holds {} bytes, its header says {} bits", data.size(), bits));
  }
  uint32_t get(int n) {
    if (m_pos + n > m_limit)
      throw Error("exponent codec",
                  fmt::format("stream ends at bit {}, {} bits short of the next field", m_limit,
                              m_pos + n - m_limit));
    uint32_t v = 0;
    for (int i = 0; i < n; ++i, ++m_pos)
      v |= static_cast<uint32_t>((m_data[m_pos / 8] >> (m_pos % 8)) & 1u) << i;
    return v;
  }
  int64_t position() const { return m_pos; }

 private:
  const std::vector<uint8_t>& m_data;
  int64_t m_limit;
  int64_t m_pos = 0;
};

// Calls emit(value, nbits) for every field of the stream, in order; returns the escape count.
template <class Emit>
int64_t walk_stream(std::span<const uint32_t> values, const ExponentCodecConfig& cfg, Emit&& emit) {
  const int m = cfg.mantissa_bits, d = cfg.delta_bits;
  int64_t escapes = 0;
  for (size_t g = 0; g < values.size(); g += cfg.group_size) {
    const size_t end = std::min(values.size(), g + cfg.group_size);
    const int base = static_cast<int>(split(values[g], m).exponent);
    emit(static_cast<uint32_t>(base), 8);
    for (size_t i = g; i < end; ++i) {
      const Fields f = split(values[i], m);
      emit(f.sign, 1);
      emit(f.mantissa, m);
      if (i == g) continue;
      const int delta = static_cast<int>(f.exponent) - base;
      if (delta >= -max_delta(d) && delta <= max_delta(d)) {
        emit(static_cast<uint32_t>(delta) & ((1u << d) - 1u), d);
      } else {
        emit(escape_code(d), d);
        emit(f.exponent, 8);
        ++escapes;
      }
    }
  }
  return escapes;
}

void check_values(std::span<const uint32_t> values, const ExponentCodecConfig& cfg) {
  const uint64_t limit = uint64_t{1} << (9 + cfg.mantissa_bits);
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] >= limit)
      throw Error("exponent codec",
                  fmt::format("value {} = 0x{:x} has bits above its {}-bit format", i, values[i],
                              9 + cfg.mantissa_bits));
}

}  // namespace

void ExponentCodecConfig::validate() const {
  check_range("group_size", group_size, 1, 4096);
  check_range("delta_bits", delta_bits, 1, 8);
  check_range("mantissa_bits", mantissa_bits, 0, 23);
}

EncodedTensor exponent_encode(std::span<const uint32_t> values, const ExponentCodecConfig& cfg) {
  cfg.validate();
  check_values(values, cfg);
  BitWriter w;
  EncodedTensor enc;
  enc.cfg = cfg;
  enc.count = static_cast<int64_t>(values.size());
  enc.escapes = walk_stream(values, cfg, [&w](uint32_t v, int n) { w.put(v, n); });
  enc.bits = w.bits();
  enc.data = w.take();
  return enc;
}

// The size formula of the header (8 + n(1 + m) + (n - 1)d + 8x bits per group): only the escapes
// need the values.
int64_t exponent_encoded_bits(std::span<const uint32_t> values, const ExponentCodecConfig& cfg) {
  cfg.validate();
  const int m = cfg.mantissa_bits, d = cfg.delta_bits, limit = max_delta(d);
  const auto n = static_cast<int64_t>(values.size());
  const int64_t groups = (n + cfg.group_size - 1) / cfg.group_size;
  int64_t escapes = 0;
  const uint32_t* v = values.data();
  for (int64_t g = 0; g < n; g += cfg.group_size) {
    const auto end = static_cast<int>(std::min<int64_t>(n - g, cfg.group_size));
    const uint32_t base = (v[g] >> m) & 0xffu;
    // An escape where |exponent - base| > limit, i.e. (exponent - base + limit) mod 2^32 > 2 limit;
    // one 32-bit count per group, so the loop vectorises.
    int32_t group_escapes = 0;
    for (int i = 1; i < end; ++i)
      group_escapes += ((((v[g + i] >> m) & 0xffu) - base + static_cast<uint32_t>(limit)) >
                        2u * static_cast<uint32_t>(limit))
                           ? 1
                           : 0;
    escapes += group_escapes;
  }
  return 8 * groups + n * (1 + m) + (n - groups) * d + 8 * escapes;
}

std::vector<uint32_t> exponent_decode(const EncodedTensor& enc) {
  const ExponentCodecConfig& cfg = enc.cfg;
  cfg.validate();
  if (enc.count < 0)
    throw Error("exponent codec", fmt::format("negative value count {}", enc.count));
  const int m = cfg.mantissa_bits, d = cfg.delta_bits;
  BitReader r(enc.data, enc.bits);
  std::vector<uint32_t> out;
  out.reserve(static_cast<size_t>(std::min<int64_t>(enc.count, enc.bits)));
  for (int64_t g = 0; g < enc.count; g += cfg.group_size) {
    const int64_t end = std::min(enc.count, g + cfg.group_size);
    const auto base = static_cast<int>(r.get(8));
    for (int64_t i = g; i < end; ++i) {
      const uint32_t sign = r.get(1);
      const uint32_t mantissa = r.get(m);
      uint32_t exponent = static_cast<uint32_t>(base);
      if (i != g) {
        const uint32_t code = r.get(d);
        if (code == escape_code(d)) {
          exponent = r.get(8);
        } else {
          const int delta = (code & escape_code(d)) != 0 ? static_cast<int>(code) - (1 << d)
                                                         : static_cast<int>(code);
          const int e = base + delta;
          if (e < 0 || e > 255)
            throw Error(
                "exponent codec",
                fmt::format("value {}: exponent {} + delta {} is outside 0..255", i, base, delta));
          exponent = static_cast<uint32_t>(e);
        }
      }
      out.push_back((sign << (m + 8)) | (exponent << m) | mantissa);
    }
  }
  if (r.position() != enc.bits)
    throw Error("exponent codec", fmt::format("{} bits left over after {} values",
                                              enc.bits - r.position(), enc.count));
  return out;
}

EncodedTensor exponent_encode_bf16(std::span<const Bf16> values, const ExponentCodecConfig& cfg) {
  TESSERA_CHECK(cfg.mantissa_bits == 7, "exponent_encode_bf16: mantissa_bits must be 7");
  std::vector<uint32_t> words(values.size());
  for (size_t i = 0; i < values.size(); ++i) words[i] = values[i].bits;
  return exponent_encode(words, cfg);
}

std::vector<Bf16> exponent_decode_bf16(const EncodedTensor& enc) {
  TESSERA_CHECK(enc.cfg.mantissa_bits == 7, "exponent_decode_bf16: stream is not bf16");
  const std::vector<uint32_t> words = exponent_decode(enc);
  std::vector<Bf16> out(words.size());
  for (size_t i = 0; i < words.size(); ++i) out[i] = Bf16{static_cast<uint16_t>(words[i])};
  return out;
}

EncodedTensor exponent_encode_f32(std::span<const float> values, const ExponentCodecConfig& cfg) {
  TESSERA_CHECK(cfg.mantissa_bits == 23, "exponent_encode_f32: mantissa_bits must be 23");
  std::vector<uint32_t> words(values.size());
  for (size_t i = 0; i < values.size(); ++i) words[i] = std::bit_cast<uint32_t>(values[i]);
  return exponent_encode(words, cfg);
}

std::vector<float> exponent_decode_f32(const EncodedTensor& enc) {
  TESSERA_CHECK(enc.cfg.mantissa_bits == 23, "exponent_decode_f32: stream is not fp32");
  const std::vector<uint32_t> words = exponent_decode(enc);
  std::vector<float> out(words.size());
  for (size_t i = 0; i < words.size(); ++i) out[i] = std::bit_cast<float>(words[i]);
  return out;
}

}  // namespace tessera::numerics
