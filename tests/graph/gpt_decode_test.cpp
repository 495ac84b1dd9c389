// The host reference of incremental decoding: the logits of every fed position equal the last row
// of the model's inference graph run on the whole prefix (bit for bit in chip numerics), whether
// the prefix came as one prefill or token by token; and its errors.
#include "graph/gpt_decode.h"

#include <bit>

#include <gtest/gtest.h>

#include "common/splitmix64.h"
#include "graph/executor.h"
#include "support/error_of.h"

namespace tessera::graph {
namespace {

using testing::error_of;

const GptSpec kSpec{.d_model = 32, .heads = 4, .layers = 2, .context = 12};

// Initialised parameters with every element perturbed, so biases and gains matter too.
std::vector<std::vector<float>> test_params(const GptSpec& spec) {
  std::vector<std::vector<float>> params = init_gpt_params(build_gpt(spec, 1), 3);
  SplitMix64 rng(11);
  for (auto& p : params)
    for (float& x : p) x += static_cast<float>(0.1 * (rng.unit() - 0.5));
  return params;
}

std::vector<int32_t> test_tokens(int n) {
  std::vector<int32_t> t;
  for (int i = 0; i < n; ++i) t.push_back((i * 97 + 13) % 256);
  return t;
}

// The last row of the logits of build_gpt(spec with context = prefix length) on the prefix.
std::vector<float> full_forward(const GptSpec& spec, std::vector<std::vector<float>> params,
                                const std::vector<int32_t>& prefix, Numerics mode) {
  GptSpec s = spec;
  s.context = static_cast<int>(prefix.size());
  const Model m = build_gpt(s, 1);
  Executor<float> ex(m.graph, mode);
  for (size_t i = 0; i < m.params.size(); ++i) {
    std::vector<float>& p = params[i];
    if (m.graph.value(m.params[i]).name == "pos") p.resize(prefix.size() * spec.d_model);
    ex.set(m.params[i], std::move(p));
  }
  ex.set_labels(m.input, prefix);
  ex.set_labels(m.labels, std::vector<int32_t>(prefix.size(), 0));
  ex.run();
  const std::vector<float>& logits = ex.get(m.logits);
  return {logits.end() - kGptVocabulary, logits.end()};
}

void expect_bits(const std::vector<float>& a, const std::vector<float>& b, int position) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(a[i]), std::bit_cast<uint32_t>(b[i]))
        << "position " << position << " logit " << i << ": " << a[i] << " vs " << b[i];
}

TEST(GptDecode, TokenByTokenEqualsTheFullForwardPassBitForBit) {
  const auto params = test_params(kSpec);
  const std::vector<int32_t> tokens = test_tokens(kSpec.context);
  GptDecoder dec(kSpec, params, Numerics::kChip);
  for (int p = 0; p < kSpec.context; ++p) {
    const std::vector<float> logits = dec.feed({tokens[p]});
    EXPECT_EQ(dec.cached(), p + 1);
    const std::vector<int32_t> prefix(tokens.begin(), tokens.begin() + p + 1);
    expect_bits(logits, full_forward(kSpec, params, prefix, Numerics::kChip), p);
  }
}

TEST(GptDecode, PrefillThenStepsEqualTheFullForwardPassBitForBit) {
  const auto params = test_params(kSpec);
  const std::vector<int32_t> tokens = test_tokens(kSpec.context);
  GptDecoder dec(kSpec, params, Numerics::kChip);
  const int prompt = 5;
  std::vector<int32_t> prefix(tokens.begin(), tokens.begin() + prompt);
  expect_bits(dec.feed(prefix), full_forward(kSpec, params, prefix, Numerics::kChip), prompt - 1);
  for (int p = prompt; p < kSpec.context; ++p) {
    prefix.push_back(tokens[p]);
    expect_bits(dec.feed({tokens[p]}), full_forward(kSpec, params, prefix, Numerics::kChip), p);
  }
  dec.reset();  // a fresh prefill after a reset is the same as on a new decoder
  expect_bits(dec.feed(prefix), full_forward(kSpec, params, prefix, Numerics::kChip),
              kSpec.context - 1);
}

TEST(GptDecode, Fp32FollowsTheFullForwardPass) {
  const auto params = test_params(kSpec);
  const std::vector<int32_t> tokens = test_tokens(7);
  GptDecoder dec(kSpec, params, Numerics::kF32);
  dec.feed({tokens.begin(), tokens.begin() + 3});
  std::vector<float> logits;
  for (int p = 3; p < 7; ++p) logits = dec.feed({tokens[p]});
  const std::vector<float> full = full_forward(kSpec, params, tokens, Numerics::kF32);
  for (size_t i = 0; i < full.size(); ++i) EXPECT_NEAR(logits[i], full[i], 1e-5) << i;
}

TEST(GptDecode, CacheBytes) {
  EXPECT_EQ(GptDecoder::cache_bytes(GptSpec{}, 64), 2 * 2 * 64 * 128 * 4);
}

TEST(GptDecodeBad, Errors) {
  const auto params = test_params(kSpec);
  GptDecoder dec(kSpec, params, Numerics::kChip);
  EXPECT_NE(error_of([&] { dec.feed({}); }).find("no tokens"), std::string::npos);
  EXPECT_NE(error_of([&] { dec.feed(test_tokens(13)); }).find("pass the context of 12"),
            std::string::npos);
  EXPECT_NE(error_of([&] { dec.feed({256}); }), "(no error)");
  auto fewer = params;
  fewer.pop_back();
  EXPECT_NE(error_of([&] {
              GptDecoder(kSpec, fewer, Numerics::kChip);
            }).find("expected 30 parameter tensors, got 29"),
            std::string::npos);
  auto shorter = params;
  shorter[1].pop_back();
  EXPECT_NE(error_of([&] {
              GptDecoder(kSpec, shorter, Numerics::kChip);
            }).find("parameter 'pos' has 383 values"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera::graph
