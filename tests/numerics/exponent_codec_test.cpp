#include "numerics/exponent_codec.h"

#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.h"
#include "numerics/bf16.h"

namespace tessera::numerics {
namespace {

ExponentCodecConfig codec(int group, int delta, int mantissa = 7) {
  ExponentCodecConfig cfg;
  cfg.group_size = group;
  cfg.delta_bits = delta;
  cfg.mantissa_bits = mantissa;
  return cfg;
}

int64_t expected_bits(const std::vector<uint32_t>& v, const ExponentCodecConfig& cfg,
                      int64_t* escapes) {
  const int m = cfg.mantissa_bits, d = cfg.delta_bits, lim = (1 << (d - 1)) - 1;
  int64_t bits = 0;
  *escapes = 0;
  for (size_t g = 0; g < v.size(); g += cfg.group_size) {
    const int base = static_cast<int>((v[g] >> m) & 0xff);
    bits += 8;
    for (size_t i = g; i < std::min(v.size(), g + cfg.group_size); ++i) {
      bits += 1 + m;
      if (i == g) continue;
      const int delta = static_cast<int>((v[i] >> m) & 0xff) - base;
      bits += d;
      if (delta < -lim || delta > lim) {
        bits += 8;
        ++*escapes;
      }
    }
  }
  return bits;
}

void expect_round_trip(const std::vector<uint32_t>& v, const ExponentCodecConfig& cfg) {
  const EncodedTensor enc = exponent_encode(v, cfg);
  ASSERT_EQ(exponent_decode(enc), v) << "group " << cfg.group_size << " delta " << cfg.delta_bits;
  int64_t escapes = 0;
  EXPECT_EQ(enc.bits, expected_bits(v, cfg, &escapes));
  EXPECT_EQ(enc.escapes, escapes);
  EXPECT_EQ(exponent_encoded_bits(v, cfg), enc.bits);
  EXPECT_EQ(enc.bytes(), static_cast<int64_t>(enc.data.size()));
  EXPECT_EQ(enc.raw_bits(), static_cast<int64_t>(v.size()) * (9 + cfg.mantissa_bits));
}

// Every bit pattern class (random 16/32-bit words), every delta width, group sizes that do and do
// not divide the length, empty and single-value tensors.
TEST(ExponentCodec, RandomPatternsRoundTripLosslesslyWithTheDocumentedSize) {
  std::mt19937 rng(11);
  for (int mantissa : {7, 23}) {
    const uint32_t mask = mantissa == 7 ? 0xffffu : 0xffffffffu;
    for (int n : {0, 1, 15, 16, 17, 1000}) {
      std::vector<uint32_t> v(n);
      for (auto& x : v) x = static_cast<uint32_t>(rng()) & mask;
      for (int group : {1, 2, 7, 16, 64})
        for (int delta = 1; delta <= 8; ++delta)
          expect_round_trip(v, codec(group, delta, mantissa));
    }
  }
}

TEST(ExponentCodec, SpecialValuesRoundTrip) {
  const std::vector<uint32_t> zeros(40, 0x0000), neg_zeros(40, 0x8000);
  std::vector<uint32_t> mixed = {0x7f80, 0xff80, 0x7fc0, 0xffc1, 0x7f81, 0x0001,
                                 0x807f, 0x0000, 0x8000, 0x7f7f, 0x0080};
  for (int i = 0; i < 5; ++i) mixed.insert(mixed.end(), mixed.begin(), mixed.begin() + 11);
  std::vector<uint32_t> nans(33);
  for (size_t i = 0; i < nans.size(); ++i)
    nans[i] = 0x7f80u | static_cast<uint32_t>(1 + i) | (i % 2 ? 0x8000u : 0u);
  for (const std::vector<uint32_t>* v :
       std::vector<const std::vector<uint32_t>*>{&zeros, &neg_zeros, &mixed, &nans})
    for (int delta : {1, 3, 8}) expect_round_trip(*v, codec(16, delta));
  const std::vector<float> f32 = {0.0f,   -0.0f,   INFINITY, -INFINITY, NAN,
                                  1e-45f, -1e-40f, 3.4e38f,  1.0f};
  const EncodedTensor enc = exponent_encode_f32(f32, codec(4, 2, 23));
  const std::vector<float> back = exponent_decode_f32(enc);
  ASSERT_EQ(back.size(), f32.size());
  for (size_t i = 0; i < f32.size(); ++i)
    EXPECT_EQ(std::bit_cast<uint32_t>(back[i]), std::bit_cast<uint32_t>(f32[i]));
}

// A group whose exponents all equal the base costs 8 + n(1 + m) + (n - 1)d bits: for bf16,
// groups of 16 and 3-bit deltas, 8 + 128 + 45 = 181 bits for 256 raw bits.
TEST(ExponentCodec, EqualExponentsCostOnlyTheDeltas) {
  std::vector<Bf16> v;
  for (int i = 0; i < 16; ++i) v.push_back(Bf16{static_cast<uint16_t>(0x3f80 | i | (i % 2) << 15)});
  const EncodedTensor enc = exponent_encode_bf16(v, codec(16, 3));
  EXPECT_EQ(enc.bits, 181);
  EXPECT_EQ(enc.escapes, 0);
  EXPECT_NEAR(enc.compression_ratio(), 256.0 / 181.0, 1e-12);
  EXPECT_EQ(exponent_decode_bf16(enc), v);
}

// Deltas at the edge of the range fit; one beyond escapes (+8 bits).
TEST(ExponentCodec, DeltasBeyondTheRangeEscape) {
  const auto at = [](int e) { return static_cast<uint32_t>(e << 7); };
  const std::vector<uint32_t> v = {at(100), at(103), at(97), at(104), at(96)};
  const EncodedTensor enc = exponent_encode(v, codec(8, 3));
  EXPECT_EQ(enc.escapes, 2);
  EXPECT_EQ(enc.bits, 8 + 5 * 8 + 4 * 3 + 2 * 8);
  EXPECT_EQ(exponent_decode(enc), v);
}

// Tensors with the narrow exponent distributions of training (normal values around a scale)
// compress; uniformly random exponents do not, and then cost at most the escapes' overhead.
TEST(ExponentCodec, NarrowExponentDistributionsCompress) {
  std::mt19937 rng(12);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  std::vector<Bf16> weights(4096);
  for (auto& x : weights) x = bf16_from_f32(dist(rng));
  const EncodedTensor enc = exponent_encode_bf16(weights, codec(16, 3));
  EXPECT_GT(enc.compression_ratio(), 1.15) << enc.escapes << " escapes";
  EXPECT_EQ(exponent_decode_bf16(enc), weights);
  std::vector<uint32_t> noise(4096);
  for (auto& x : noise) x = static_cast<uint32_t>(rng()) & 0xffffu;
  const EncodedTensor bad = exponent_encode(noise, codec(16, 3));
  EXPECT_LT(bad.compression_ratio(), 1.0);
  EXPECT_LE(bad.bits, bad.raw_bits() + (4096 / 16) * 8 + 4096 * 3);
}

TEST(ExponentCodec, TruncatedStreamIsRejected) {
  std::vector<uint32_t> v(20, 0x3f80);
  EncodedTensor enc = exponent_encode(v, codec(16, 3));
  enc.data.resize(enc.data.size() - 3);
  try {
    exponent_decode(enc);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "exponent codec");
    EXPECT_EQ(e.why(), "stream holds 26 bytes, its header says 230 bits");
  }
  enc = exponent_encode(v, codec(16, 3));
  enc.bits -= 5;
  try {
    exponent_decode(enc);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.why(), "stream ends at bit 225, 2 bits short of the next field");
  }
}

// Arbitrary bytes, and valid streams with flipped bits, either decode to count values or raise
// tessera::Error; never anything else. Both outcomes occur.
TEST(ExponentCodec, CorruptStreamsDecodeOrRaiseError) {
  std::mt19937 rng(13);
  int decoded = 0, rejected = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    EncodedTensor enc;
    const ExponentCodecConfig cfg =
        codec(1 + static_cast<int>(rng() % 20), 1 + static_cast<int>(rng() % 8), 7);
    if (trial % 2 == 0) {
      std::vector<uint32_t> v(1 + rng() % 60);
      for (auto& x : v) x = 0x3c00u + static_cast<uint32_t>(rng() % 0x800);
      enc = exponent_encode(v, cfg);
      enc.data[rng() % enc.data.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    } else {
      enc.cfg = cfg;
      enc.count = static_cast<int64_t>(rng() % 50);
      enc.data.resize(rng() % 200);
      for (auto& b : enc.data) b = static_cast<uint8_t>(rng());
      enc.bits = static_cast<int64_t>(rng() % (enc.data.size() * 8 + 16));
    }
    try {
      EXPECT_EQ(static_cast<int64_t>(exponent_decode(enc).size()), enc.count);
      ++decoded;
    } catch (const Error&) {
      ++rejected;
    }
  }
  EXPECT_GT(decoded, 0);
  EXPECT_GT(rejected, 0);
}

TEST(ExponentCodec, BadInputIsRejectedNamingTheField) {
  try {
    exponent_encode(std::vector<uint32_t>{1}, codec(16, 9));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "ExponentCodecConfig.delta_bits");
    EXPECT_EQ(e.why(), "9 is out of range [1, 8]");
  }
  try {
    exponent_encode(std::vector<uint32_t>{0x10000}, codec(16, 3));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.why(), "value 0 = 0x10000 has bits above its 16-bit format");
  }
}

}  // namespace
}  // namespace tessera::numerics
