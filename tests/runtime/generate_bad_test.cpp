// Bad input to generation: options, prompts against the context, and checkpoints that are
// missing, corrupt, of another model or of the wrong shapes. Exact error texts.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "runtime/checkpoint.h"
#include "runtime/generate.h"
#include "support/error_of.h"

namespace tessera::runtime {
namespace {

using testing::error_of;

const graph::GptSpec kSpec{.d_model = 16, .heads = 2, .layers = 1, .context = 8};

std::string fresh_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

Checkpoint gpt_checkpoint() {
  Checkpoint k;
  k.identity["model"] = "gpt";
  k.identity["gpt"] = {{"d_model", 16}, {"heads", 2}, {"layers", 1}, {"context", 8}};
  k.params = graph::init_gpt_params(graph::build_gpt(kSpec, 1), 1);
  return k;
}

TEST(GenerateBad, Options_bad) {
  auto check = [](GenerateOptions o) { return error_of([&] { check_generate_options(o); }); };
  EXPECT_EQ(check({.prompt = "", .tokens = 5, .sampling = {}}), "generate: --prompt is empty");
  EXPECT_EQ(check({.prompt = "a", .tokens = 0, .sampling = {}}),
            "generate: --tokens must be >= 1, got 0");
  EXPECT_EQ(check({.prompt = "a", .tokens = -3, .sampling = {}}),
            "generate: --tokens must be >= 1, got -3");
  EXPECT_EQ(check({.prompt = "a", .tokens = 1, .sampling = {.temperature = -0.5}}),
            "generate: --temperature must be a finite number >= 0, got -0.500000");
  EXPECT_EQ(check({.prompt = "a", .tokens = 1, .sampling = {.top_k = 257}}),
            "generate: --top-k must be in [0, 256] (0: no cut), got 257");
  EXPECT_EQ(check({.prompt = "a", .tokens = 1, .sampling = {.top_k = -1}}),
            "generate: --top-k must be in [0, 256] (0: no cut), got -1");
  EXPECT_EQ(check({.prompt = "a", .tokens = 1, .sampling = {.temperature = 0, .top_k = 256}}),
            "(no error)");
}

TEST(GenerateBad, PromptLongerThanTheContext_bad) {
  Checkpoint k = gpt_checkpoint();
  GptCheckpoint c{"x", kSpec, k.params};
  auto host = host_decoder(c, {}, 1024);
  EXPECT_EQ(error_of([&] {
              generate(*host, kSpec, {.prompt = "123456789", .tokens = 1, .sampling = {}});
            }),
            "generate: the prompt has 9 bytes; the model's context is 8");
  EXPECT_EQ(error_of([&] {
              generate(*host, kSpec, {.prompt = "12345678", .tokens = 3, .sampling = {}});
            }),
            "(no error)");
}

TEST(GenerateBad, Checkpoints_bad) {
  const std::string dir = fresh_dir("generate_bad");
  EXPECT_EQ(error_of([&] { read_gpt_checkpoint(dir + "/none.tsck"); }).rfind(dir + "/none.tsck", 0),
            0u);
  EXPECT_EQ(error_of([&] { read_gpt_checkpoint(dir); }),
            dir + ": no checkpoint in this directory (looked for ckpt-<step>.tsck)");

  // The error reading checkpoint `c` written as <dir>/<name>, with the path stripped.
  auto refusal = [&](const std::string& name, const Checkpoint& c) {
    write_checkpoint(dir + "/" + name, c);
    const std::string e = error_of([&] { read_gpt_checkpoint(dir + "/" + name); });
    const std::string prefix = dir + "/" + name + ": ";
    return e.rfind(prefix, 0) == 0 ? e.substr(prefix.size()) : e;
  };
  Checkpoint mlp;
  mlp.identity["model"] = "mlp";
  mlp.params = {{1, 2, 3}};
  EXPECT_EQ(refusal("mlp.tsck", mlp),
            "a checkpoint of model \"mlp\", not \"gpt\": generate needs one written by "
            "`tessera train --model gpt`");
  Checkpoint no_spec = gpt_checkpoint();
  no_spec.identity.erase("gpt");
  EXPECT_EQ(refusal("no_spec.tsck", no_spec),
            "the checkpoint's identity has no \"gpt\" object (d_model, heads, layers, context)");
  Checkpoint bad_heads = gpt_checkpoint();
  bad_heads.identity["gpt"]["heads"] = 3;
  EXPECT_EQ(refusal("heads.tsck", bad_heads), "model 'gpt': heads (3) must divide d_model (16)");
  Checkpoint other_shape = gpt_checkpoint();
  other_shape.identity["gpt"]["context"] = 16;
  EXPECT_EQ(refusal("shape.tsck", other_shape),
            "model 'gpt': parameter 'pos' has 128 values, its shape [16, 16] needs 256");

  write_checkpoint(dir + "/good.tsck", gpt_checkpoint());
  std::string bytes;
  {
    std::ifstream in(dir + "/good.tsck", std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  bytes[bytes.size() / 2] ^= 1;
  std::ofstream(dir + "/corrupt.tsck", std::ios::binary) << bytes;
  const std::string corrupt = error_of([&] { read_gpt_checkpoint(dir + "/corrupt.tsck"); });
  EXPECT_EQ(corrupt.rfind(dir + "/corrupt.tsck: ", 0), 0u) << corrupt;
  EXPECT_NE(corrupt.find("checksum mismatch"), std::string::npos) << corrupt;
  EXPECT_EQ(read_gpt_checkpoint(dir + "/good.tsck").spec.context, 8);
}

}  // namespace
}  // namespace tessera::runtime
