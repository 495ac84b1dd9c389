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

TEST(Generate, ChipLogitsEqualTheHostReferenceBitForBit) {
  const GptCheckpoint c = test_checkpoint();
  auto chip = chip_decoder(c, chip_test::tpu_v2_like());
  auto host = host_decoder(c);
  const std::vector<int32_t> prompt = {72, 101, 108, 108, 111};
  expect_bits(chip->feed(prompt), host->feed(prompt), "prefill");
  const int64_t prefill = chip->cycles();
  EXPECT_GT(prefill, 0);
  for (int p = 5; p < kSpec.context; ++p) {
    const int32_t t = (p * 37) % 256;
    expect_bits(chip->feed({t}), host->feed({t}), "step at position " + std::to_string(p));
  }
  chip->reset();
  host->reset();
  expect_bits(chip->feed({1, 2, 3}), host->feed({1, 2, 3}), "refill");
  expect_bits(chip->feed({4}), host->feed({4}), "step after the refill");
}

TEST(Generate, GreedyAndSampledTextEqualTheHostReference) {
  const GptCheckpoint c = test_checkpoint();
  for (const numerics::Sampling s :
       {numerics::Sampling{.temperature = 0}, numerics::Sampling{.temperature = 0.8, .seed = 3},
        numerics::Sampling{.temperature = 1.5, .top_k = 5, .seed = 9}}) {
    const GenerateOptions o{.prompt = "Hello", .tokens = 20, .sampling = s};
    auto chip = chip_decoder(c, chip_test::tpu_v2_like());
    auto host = host_decoder(c);
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
