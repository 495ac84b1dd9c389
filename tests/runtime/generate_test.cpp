// Generation on the simulated chip against the host reference: the logits of every prefill,
// decoding step and refill bit for bit, greedy and sampled text token for token; checkpoints read
// by path or directory.
#include "runtime/generate.h"

#include <bit>
#include <filesystem>

#include <gtest/gtest.h>

#include "common/splitmix64.h"
#include "graph/gpt_decode.h"
#include "runtime/checkpoint.h"
#include "runtime/chip_test_data.h"

namespace tessera::runtime {
namespace {

const graph::GptSpec kSpec{.d_model = 32, .heads = 4, .layers = 2, .context = 12};

GptCheckpoint test_checkpoint() {
  GptCheckpoint c;
  c.spec = kSpec;
  c.params = graph::init_gpt_params(graph::build_gpt(kSpec, 1), 5);
  SplitMix64 rng(17);  // perturbed, so biases and gains matter too
  for (auto& p : c.params)
    for (float& x : p) x += static_cast<float>(0.2 * (rng.unit() - 0.5));
  return c;
}

void expect_bits(const std::vector<float>& chip, const std::vector<float>& host,
                 const std::string& what) {
  ASSERT_EQ(chip.size(), host.size());
  for (size_t i = 0; i < chip.size(); ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(chip[i]), std::bit_cast<uint32_t>(host[i]))
        << what << " logit " << i << ": " << chip[i] << " vs " << host[i];
}

const numerics::Sampling kGreedy{.temperature = 0, .top_k = 0, .seed = 0};

int64_t words_per_rng(const core::CoreSpec& spec) {
  return int64_t{spec.sublanes} * spec.lanes;
}

TEST(Generate, ChipLogitsEqualTheHostReferenceBitForBit) {
  const GptCheckpoint c = test_checkpoint();
  const core::CoreSpec spec = chip_test::tpu_v2_like();
  auto chip = chip_decoder(c, kGreedy, spec);
  auto host = host_decoder(c, kGreedy, words_per_rng(spec));
  auto feed = [&](const std::vector<int32_t>& tokens, const std::string& what) {
    const int token = chip->feed(tokens);
    EXPECT_EQ(token, host->feed(tokens)) << what;
    expect_bits(chip->logits(), host->logits(), what);
  };
  feed({72, 101, 108, 108, 111}, "prefill");
  EXPECT_GT(chip->cycles(), 0);
  for (int p = 5; p < kSpec.context; ++p)
    feed({(p * 37) % 256}, "step at position " + std::to_string(p));
  chip->reset();
  host->reset();
  feed({1, 2, 3}, "refill");
  feed({4}, "step after the refill");
}

TEST(Generate, GreedyAndSampledTextEqualTheHostReference) {
  const GptCheckpoint c = test_checkpoint();
  for (const numerics::Sampling s :
       {kGreedy, numerics::Sampling{.temperature = 0.8, .top_k = 0, .seed = 3},
        numerics::Sampling{.temperature = 1.5, .top_k = 5, .seed = 9},
        numerics::Sampling{.temperature = 1, .top_k = 1, .seed = 2},
        numerics::Sampling{.temperature = 3, .top_k = 256, .seed = 4}}) {
    const GenerateOptions o{.prompt = "Hello", .tokens = 20, .sampling = s};
    const core::CoreSpec spec = chip_test::tpu_v2_like();
    auto chip = chip_decoder(c, s, spec);
    auto host = host_decoder(c, s, words_per_rng(spec));
    const GenerateResult r = generate(*chip, kSpec, o);
    const GenerateResult h = generate(*host, kSpec, o);
    EXPECT_EQ(r.text, h.text) << "temperature " << s.temperature;
    EXPECT_EQ(r.text.size(), 20u);
    // 5 + 7 steps fill the 12 positions; then refills of 6 and 5 steps each
    EXPECT_EQ(r.steps + r.refills, 19);
    EXPECT_EQ(r.refills, 2);
    EXPECT_GT(r.prefill_cycles, 0);
    EXPECT_GT(r.decode_cycles, 0);
    EXPECT_EQ(r.kv_cache_bytes, 2 * 2 * 12 * 32 * 4);
    EXPECT_EQ(r.peak_cached_bytes, r.kv_cache_bytes);
  }
}

TEST(Generate, ReadsACheckpointFileOrTheNewestOfADirectory) {
  const std::string dir = testing::TempDir() + "/generate_ckpt";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const GptCheckpoint c = test_checkpoint();
  Checkpoint k;
  k.identity["model"] = "gpt";
  k.identity["gpt"] = {{"d_model", 32}, {"heads", 4}, {"layers", 2}, {"context", 12}};
  k.params = c.params;
  write_checkpoint(dir + "/" + checkpoint_file_name(3), k);
  k.params[0][0] += 1;
  write_checkpoint(dir + "/" + checkpoint_file_name(7), k);
  const GptCheckpoint newest = read_gpt_checkpoint(dir);
  EXPECT_EQ(newest.path, dir + "/" + checkpoint_file_name(7));
  EXPECT_EQ(newest.params[0][0], k.params[0][0]);
  EXPECT_EQ(newest.spec.context, 12);
  const GptCheckpoint file = read_gpt_checkpoint(dir + "/" + checkpoint_file_name(3));
  EXPECT_EQ(file.params, c.params);
  EXPECT_EQ(file.spec.d_model, 32);
}

}  // namespace
}  // namespace tessera::runtime
