// The exponent base-delta encoding mode of HBM traffic (core/hbm_encoding.h): DMA streams the
// encoded size, values stay the same, per-kind accounting, config validation.
#include "core/hbm_encoding.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core_test_util.h"
#include "support/error_of.h"

namespace tessera::core {
namespace {

nlohmann::json encoding(bool on, int group = 16, int delta = 3) {
  return {{"hbm",
           {{"bytes", 1 << 20},
            {"bytes_per_cycle", 4},
            {"exponent_encoding", {{"on", on}, {"group_size", group}, {"delta_bits", delta}}}}},
          {"dma", {{"latency", 20}}}};
}

// 64 fp32 words at HBM 1000: `spread` = false: all in [1, 2) (one exponent); true: every 4th word
// 2^40 times larger (an escape per such word inside a group).
std::vector<uint32_t> hbm_words(bool spread) {
  std::vector<uint32_t> w;
  for (int i = 0; i < 64; ++i) {
    const float x = 1.0f + static_cast<float>(i) / 64.0f;
    w.push_back(test::bits(spread && i % 4 == 3 ? std::ldexp(x, 40) : x));
  }
  return w;
}

// One 64-word dma.hv; returns the cycle the wait for it issues at + 1 (the smfsr's cycle).
uint32_t read_done_cycle(const CoreSpec& spec, bool spread) {
  auto c = test::run_timed(spec, ".hbm 1000\n" + test::words_directive(hbm_words(spread)) + R"(
  sli s1, 1000 ;; sli s2, 64
  sli s3, 0
  dma.hv s3, s1, s2, 1
  wait 1, 1
  smfsr s11, %cycle_lo
  halt
)");
  return c->state().sreg(11);
}

// Bits of 64 values in groups of 16 with delta width 3 and x escapes: 4 bases of 8 bits, 64 x
// (sign + 23 mantissa bits), 60 deltas of 3 bits, 8 bits per escape.
int64_t expected_bytes(int64_t escapes) {
  return (4 * 8 + 64 * 24 + 60 * 3 + 8 * escapes + 7) / 8;
}

TEST(HbmEncoding, ADmaReadStreamsTheEncodedSizeInsteadOfFourBytesPerWord) {
  const uint32_t off = read_done_cycle(test::small_spec(encoding(false)), false);
  // Off: issue at cycle 2, done at 2 + 20 + 256 / 4; the smfsr issues one cycle after the wait.
  EXPECT_EQ(off, 2 + 20 + 64 + 1u);
  for (bool spread : {false, true}) {
    const int64_t bytes =
        expected_bytes(spread ? 16 : 0);  // every 4th word escapes; none is a base
    const uint32_t on = read_done_cycle(test::small_spec(encoding(true)), spread);
    EXPECT_EQ(on, 2 + 20 + (bytes + 3) / 4 + 1) << spread;
    EXPECT_LT(on, off);
  }
}

TEST(HbmEncoding, HbmByteCountersCountEncodedBytesAndTheDataPathMovesTheSameWords) {
  const std::string text = ".hbm 1000\n" + test::words_directive(hbm_words(true)) + R"(
.smem 0
.word 4, 16, 16, 16             // 2-D: 4 chunks of 16 words
  sli s1, 1000 ;; sli s2, 64
  sli s3, 64
  dma.hv s3, s1, s2, 1
  wait 1, 1
  sli s4, 2000
  dma.vh s4, s3, s2, 2            // vector memory -> HBM 2000
  sli s5, 0 ;; sli s6, 256
  dma.hv.2d s6, s1, s5, 3         // HBM 1000 in 4 chunks -> vector memory 256, 272, ...
  sli s7, 100
  dma.hs s7, s1, s2, 4
  wait 2, 1
  wait 3, 1
  wait 4, 1
  halt
)";
  auto off = test::run_both(test::small_spec(encoding(false)), text);
  auto on = test::run_both(test::small_spec(encoding(true)), text);
  EXPECT_EQ(diff_architectural_state(off->state(), on->state()), "");
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(on->state().hbm.read(2000 + i), hbm_words(true)[static_cast<size_t>(i)]) << i;
  const EventCounts& e = on->machine().events();
  EXPECT_EQ(off->machine().events().hbm_read_bytes, 3 * 256);
  EXPECT_EQ(off->machine().events().hbm_write_bytes, 256);
  // Reads: two 64-word requests (one stream each) and one of 4 chunks of 16 (4 streams, each one
  // group: base + 16 x 24 bits + 15 deltas + 4 escapes of 8 bits = 469 bits = 59 bytes).
  EXPECT_EQ(e.hbm_read_bytes, 2 * expected_bytes(16) + 4 * 59);
  EXPECT_EQ(e.hbm_write_bytes, expected_bytes(16));
  EXPECT_EQ(e.dma_bytes, off->machine().events().dma_bytes);
  EXPECT_EQ(e.vmem_write_bytes, off->machine().events().vmem_write_bytes);
  // No role map: every request counts as "other".
  const HbmTrafficByKind& t = on->machine().hbm_encoder().traffic();
  EXPECT_EQ(t[static_cast<size_t>(HbmKind::kOther)].requests, 4);
  EXPECT_EQ(t[static_cast<size_t>(HbmKind::kOther)].raw_bytes, 4 * 256);
  EXPECT_EQ(t[static_cast<size_t>(HbmKind::kOther)].encoded_bytes,
            e.hbm_read_bytes + e.hbm_write_bytes);
  EXPECT_EQ(off->machine().hbm_encoder().traffic(), HbmTrafficByKind{});
}

TEST(HbmEncoding, RequestsCountUnderTheKindOfTheirHbmWordsAtTheIssuingPc) {
  const CoreSpec spec = test::small_spec(encoding(true));
  const std::string text = ".hbm 1000\n" + test::words_directive(hbm_words(false)) + R"(
  sli s1, 1000 ;; sli s2, 16
  sli s3, 0 ;; sli s4, 1016
  dma.hv s3, s1, s2, 1            // pc 2: HBM 1000 (weights while pcs 0..3 run)
  dma.hv s3, s4, s2, 1            // pc 3: HBM 1016 (activations)
  dma.hv s3, s1, s2, 1            // pc 4: HBM 1000 is gradients from pc 4 on
  dma.hv s3, s4, s2, 1            // pc 5: HBM 1016 has no role here
  wait 1, 4
  halt
)";
  Core c(spec, test::assemble(text, spec));
  const std::vector<HbmRole> roles = {{0, 4, 1000, 16, HbmKind::kWeights},
                                      {0, 4, 1016, 16, HbmKind::kActivations},
                                      {4, 100, 1000, 16, HbmKind::kGradients}};
  c.machine().hbm_encoder().set_roles(&roles, 0);
  c.run();
  const HbmTrafficByKind& t = c.machine().hbm_encoder().traffic();
  const int64_t one = (8 + 16 * 24 + 15 * 3 + 7) / 8;
  for (HbmKind k :
       {HbmKind::kWeights, HbmKind::kActivations, HbmKind::kGradients, HbmKind::kOther}) {
    EXPECT_EQ(t[static_cast<size_t>(k)].requests, 1) << to_string(k);
    EXPECT_EQ(t[static_cast<size_t>(k)].raw_bytes, 64) << to_string(k);
    EXPECT_EQ(t[static_cast<size_t>(k)].encoded_bytes, one) << to_string(k);
  }
  EXPECT_EQ(t[static_cast<size_t>(HbmKind::kOptimizerState)], HbmTraffic{});
}

TEST(HbmEncoding, ConfigValues_bad) {
  auto error = [](int group, int delta) {
    return testing::error_of([&] { test::small_spec(encoding(true, group, delta)); });
  };
  EXPECT_EQ(error(0, 3),
            "<small>: key 'core.hbm.exponent_encoding.group_size': value 0 is out of range [1, "
            "4096] (values)");
  EXPECT_EQ(error(16, 9),
            "<small>: key 'core.hbm.exponent_encoding.delta_bits': value 9 is out of range [1, 8] "
            "(bits)");
  EXPECT_EQ(testing::error_of([] {
              test::small_spec({{"hbm", {{"exponent_encoding", {{"on", "yes"}}}}}});
            }),
            "<small>: key 'core.hbm.exponent_encoding.on': expected true or false, got \"yes\"");
}

}  // namespace
}  // namespace tessera::core
