// The sampling kernel on the simulated core against numerics/sampling.h, token for token: greedy
// and sampled, with and without a top-k cut, over logits with ties, -Inf and a row that does not
// fill its last block of lanes, on two core shapes.
#include <bit>
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "common/error.h"
#include "common/splitmix64.h"
#include "compiler/kernels_sample.h"
#include "core/core.h"
#include "support/error_of.h"
#include "support/kernel_config.h"

namespace tessera::compiler {
namespace {

// The tokens of `draws` sampling kernels run one after another on one core (the RNG unit seeded
// once), the logits at HBM word 0 and the token at word 1024.
std::vector<int> chip_tokens(const core::CoreSpec& spec, const std::vector<float>& logits,
                             const numerics::Sampling& s, int draws) {
  Codegen cg(spec);
  emit_sample(cg, "sample", 0, 1024, static_cast<int64_t>(logits.size()), s);
  const isa::Program prog = cg.finish();
  isa::Program seed = rng_seed_program(s.seed, spec);
  std::vector<uint32_t> words(logits.size());
  for (size_t i = 0; i < words.size(); ++i) words[i] = std::bit_cast<uint32_t>(logits[i]);
  seed.data.push_back(isa::DataSegment{isa::Space::Hbm, 0, words});
  core::Core core(spec, seed);
  core.run();
  std::vector<int> out;
  for (int i = 0; i < draws; ++i) {
    core.load(prog);
    core.run();
    uint32_t token = 0;
    core.state().hbm.read_block(1024, &token, 1);
    out.push_back(static_cast<int>(token));
  }
  return out;
}

std::vector<int> host_tokens(const core::CoreSpec& spec, const std::vector<float>& logits,
                             const numerics::Sampling& s, int draws) {
  std::vector<int> out;
  int64_t draw = 0;
  for (int i = 0; i < draws; ++i) {
    std::vector<uint32_t> w;
    if (s.temperature > 0)
      w = numerics::sampling_draw(s, draw++, int64_t{spec.sublanes} * spec.lanes,
                                  static_cast<int>(logits.size()));
    out.push_back(numerics::sample_token(logits, s, w.data()));
  }
  return out;
}

// n logits from a few distinct values (many ties), one -Inf.
std::vector<float> tied_logits(int n, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = static_cast<float>(static_cast<int>(rng.unit() * 5)) * 0.75f - 1.0f;
  x[static_cast<size_t>(n / 2)] = -std::numeric_limits<float>::infinity();
  return x;
}

TEST(SampleKernel, TokensEqualTheHostDefinition) {
  struct Case {
    const char* config;
    int n;
  };
  for (const Case c :
       {Case{"small", 13}, Case{"small", 16}, Case{"tpu-v2-like", 256}, Case{"tpu-v2-like", 200}}) {
    const core::CoreSpec spec = testing::kernel_config(c.config);
    const std::vector<float> logits = tied_logits(c.n, static_cast<uint64_t>(c.n));
    for (const numerics::Sampling s :
         {numerics::Sampling{.temperature = 0, .top_k = 0, .seed = 0},
          numerics::Sampling{.temperature = 1, .top_k = 0, .seed = 5},
          numerics::Sampling{.temperature = 0.5, .top_k = 3, .seed = 6},
          numerics::Sampling{.temperature = 2, .top_k = 1, .seed = 7},
          numerics::Sampling{.temperature = 4, .top_k = c.n, .seed = 8}}) {
      const std::vector<int> chip = chip_tokens(spec, logits, s, 6);
      EXPECT_EQ(chip, host_tokens(spec, logits, s, 6))
          << c.config << " n " << c.n << " temperature " << s.temperature << " top-k " << s.top_k;
    }
  }
}

TEST(SampleKernel, RowLongerThanOneDraw_bad) {
  const core::CoreSpec spec = testing::kernel_config("small");  // Codegen keeps a reference
  Codegen cg(spec);
  EXPECT_EQ(testing::error_of([&] { emit_sample(cg, "sample", 0, 1024, 17, {}); }),
            "compiler: sampling 'sample': 17 logits exceed the 16 words of one rng draw");
}

}  // namespace
}  // namespace tessera::compiler
