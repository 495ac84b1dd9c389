// `tessera generate` end to end through the built executable: greedy text checked against the
// host reference with its JSON report, and bad input: flag values (exit 2), prompts longer than
// the context and checkpoints that are missing or of another model (exit 1), each with its message.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "graph/gpt_model.h"
#include "runtime/checkpoint.h"
#include "support/cli_run.h"

namespace tessera {
namespace {

using testing::run_cli;

class GenerateCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::cli_binary_exists()) GTEST_SKIP() << "tessera not built";
  }
  // Exit code and standard error of `tessera generate ARGS`.
  static std::pair<int, std::string> refused(const std::string& args) {
    const testing::CliResult r = run_cli("generate " + args, true);
    return {r.status >> 8, r.out};
  }
};

TEST_F(GenerateCli, GreedyTextFromACheckpointEqualsTheHostReference) {
  const std::string dir = ::testing::TempDir() + "/generate_cli";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const graph::GptSpec spec{.d_model = 32, .heads = 2, .layers = 1, .context = 16};
  runtime::Checkpoint c;
  c.identity["model"] = "gpt";
  c.identity["gpt"] = {{"d_model", 32}, {"heads", 2}, {"layers", 1}, {"context", 16}};
  c.params = graph::init_gpt_params(graph::build_gpt(spec, 1), 4);
  runtime::write_checkpoint(dir + "/" + runtime::checkpoint_file_name(1), c);
  const testing::CliResult r = run_cli("generate --checkpoint " + dir +
                                       " --prompt 'To be' --tokens 30 --temperature 0 --check "
                                       "--json");
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["checkpoint"], dir + "/" + runtime::checkpoint_file_name(1));
  EXPECT_EQ(j["bytes"].size(), 30u);
  EXPECT_EQ(j["checked_against_host"], true);
  EXPECT_EQ(j["decode_steps"].get<int>() + j["refills"].get<int>(), 29);
  EXPECT_EQ(j["kv_cache_bytes"], 2 * 1 * 16 * 32 * 4);
  EXPECT_GT(j["prefill_cycles"].get<int64_t>(), 0);
  EXPECT_GT(j["cycles_per_token"].get<double>(), 0);
  EXPECT_GT(j["tokens_per_sim_second"].get<double>(), 0);
}

TEST_F(GenerateCli, FlagValues_bad) {
  const std::string init = "--random-init 0 --prompt ab ";
  EXPECT_EQ(refused(init + "--tokens 0"),
            std::make_pair(2, std::string("tessera: error: generate: --tokens must be >= 1, "
                                          "got 0\n")));
  EXPECT_EQ(refused("--random-init 0 --prompt '' --tokens 1"),
            std::make_pair(2, std::string("tessera: error: generate: --prompt is empty\n")));
  EXPECT_EQ(refused(init + "--tokens 1 --top-k 257"),
            std::make_pair(2, std::string("tessera: error: generate: --top-k must be in [0, 256] "
                                          "(0: no cut), got 257\n")));
  EXPECT_EQ(refused(init + "--tokens 1 --temperature -1"),
            std::make_pair(2, std::string("tessera: error: generate: --temperature must be a "
                                          "finite number >= 0, got -1.000000\n")));
  EXPECT_EQ(refused("--prompt ab --tokens 1"),
            std::make_pair(2, std::string("tessera: error: generate: give --checkpoint D or "
                                          "--random-init S\n")));
  EXPECT_EQ(refused("--checkpoint x --random-init 0 --prompt ab --tokens 1").first, 2);
}

TEST_F(GenerateCli, PromptsAndCheckpoints_bad) {
  EXPECT_EQ(refused("--random-init 0 --tokens 1 --prompt " + std::string(65, 'a')),
            std::make_pair(1, std::string("tessera: error: generate: the prompt has 65 bytes; the "
                                          "model's context is 64\n")));
  const std::string dir = ::testing::TempDir() + "/generate_cli_bad";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto [code, err] = refused("--checkpoint " + dir + "/none.tsck --prompt a --tokens 1");
  EXPECT_EQ(code, 1);
  EXPECT_EQ(err.rfind("tessera: error: " + dir + "/none.tsck: ", 0), 0u) << err;
  runtime::Checkpoint cnn;
  cnn.identity["model"] = "cnn";
  cnn.params = {{0.5f}};
  runtime::write_checkpoint(dir + "/" + runtime::checkpoint_file_name(2), cnn);
  EXPECT_EQ(refused("--checkpoint " + dir + " --prompt a --tokens 1"),
            std::make_pair(1, "tessera: error: " + dir + "/" + runtime::checkpoint_file_name(2) +
                                  ": a checkpoint of model \"cnn\", not \"gpt\": generate needs "
                                  "one written by `tessera train --model gpt`\n"));
}

}  // namespace
}  // namespace tessera
