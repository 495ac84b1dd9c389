// A BERT-base-shaped encoder (hidden 768, 12 heads, feed-forward 3072, sequence 128), built in C++
// with the ops PyTorch 1.13 exports for scripts/export-models' `bert` (opset 17: fused QKV MatMul
// and Add, Split, Reshape and Transpose into heads, scaled scores, Softmax, GELU as erf,
// post-LayerNormalization), on tpu-v3-like. Its program does not fit instruction memory with one
// level of loops, so the compiler rolls it nested: the values are the one-level program's bit for
// bit, within bf16 of the host fp32 executor, and twelve layers fit the default 65,536 bundles.
#include <algorithm>
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "common/splitmix64.h"
#include "model_builder.h"
#include "onnx/chip_model.h"
#include "onnx/host_run.h"
#include "system/machine_spec.h"

namespace tessera::onnx_import {
namespace {

constexpr int64_t kSeq = 128, kHidden = 768, kHeads = 12, kFf = 3072, kVocab = 64;

std::vector<float> uniform(int64_t n, double bound, SplitMix64& rng) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>((2 * rng.unit() - 1) * bound);
  return v;
}

// PyTorch's nn.Linear as exported: MatMul by the [in, out] weight, then Add of the bias.
std::string linear(testing::OnnxBuilder& b, const std::string& x, const std::string& name,
                   int64_t in, int64_t out, SplitMix64& rng) {
  const double bound = 1 / std::sqrt(static_cast<double>(in));
  b.init(name + ".w", {in, out}, uniform(in * out, bound, rng));
  b.init(name + ".b", {out}, uniform(out, bound, rng));
  b.node("MatMul", {x, name + ".w"}, {name + ".mm"});
  b.node("Add", {name + ".mm", name + ".b"}, {name});
  return name;
}

std::string layer_norm(testing::OnnxBuilder& b, const std::string& x, const std::string& name) {
  b.init(name + ".scale", {kHidden}, std::vector<float>(kHidden, 1.0f));
  b.init(name + ".bias", {kHidden}, std::vector<float>(kHidden, 0.0f));
  testing::OnnxBuilder::attr(
      b.node("LayerNormalization", {x, name + ".scale", name + ".bias"}, {name}), "axis", -1);
  return name;
}

std::string heads(testing::OnnxBuilder& b, const std::string& x, const std::vector<int64_t>& perm) {
  b.node("Reshape", {x, "heads.shape"}, {x + ".heads"});
  testing::OnnxBuilder::attr(b.node("Transpose", {x + ".heads"}, {x + ".t"}), "perm", perm);
  return x + ".t";
}

// Token ids "ids" [1, 128] -> hidden states "y" [1, 128, 768] through `layers` encoder layers.
std::string encoder_bytes(int layers) {
  SplitMix64 rng(128);
  testing::OnnxBuilder b(17);
  b.input("ids", {1, kSeq}, onnx::TensorProto::INT64);
  b.init("tok", {kVocab, kHidden}, uniform(kVocab * kHidden, 1.0, rng));
  b.init("pos", {1, kSeq, kHidden}, uniform(kSeq * kHidden, 1.0, rng));
  b.init_ints("split", {kHidden, kHidden, kHidden});
  b.init_ints("heads.shape", {1, kSeq, kHeads, kHidden / kHeads});
  b.init_ints("merged.shape", {1, kSeq, kHidden});
  b.init("sqrt_dk", {}, {8.0f});
  b.init("sqrt2", {}, {1.41421354f});
  b.init("one", {}, {1.0f});
  b.init("half", {}, {0.5f});
  b.node("Gather", {"tok", "ids"}, {"embedded"});
  b.node("Add", {"embedded", "pos"}, {"x0"});
  std::string x = "x0";
  for (int l = 0; l < layers; ++l) {
    const std::string p = "l" + std::to_string(l) + ".";
    const std::string qkv = linear(b, x, p + "qkv", kHidden, 3 * kHidden, rng);
    testing::OnnxBuilder::attr(
        b.node("Split", {qkv, "split"}, {p + "q", p + "k", p + "v"}, p + "split"), "axis", -1);
    const std::string q = heads(b, p + "q", {0, 2, 1, 3});
    const std::string k = heads(b, p + "k", {0, 2, 3, 1});
    const std::string v = heads(b, p + "v", {0, 2, 1, 3});
    b.node("MatMul", {q, k}, {p + "scores"});
    b.node("Div", {p + "scores", "sqrt_dk"}, {p + "scaled"});
    testing::OnnxBuilder::attr(b.node("Softmax", {p + "scaled"}, {p + "probs"}), "axis", -1);
    b.node("MatMul", {p + "probs", v}, {p + "att"});
    testing::OnnxBuilder::attr(b.node("Transpose", {p + "att"}, {p + "att.t"}), "perm",
                               std::vector<int64_t>{0, 2, 1, 3});
    b.node("Reshape", {p + "att.t", "merged.shape"}, {p + "merged"});
    const std::string proj = linear(b, p + "merged", p + "proj", kHidden, kHidden, rng);
    b.node("Add", {x, proj}, {p + "res1"});
    const std::string h = layer_norm(b, p + "res1", p + "ln1");
    const std::string fc1 = linear(b, h, p + "fc1", kHidden, kFf, rng);
    b.node("Div", {fc1, "sqrt2"}, {p + "gelu.div"});
    b.node("Erf", {p + "gelu.div"}, {p + "gelu.erf"});
    b.node("Add", {p + "gelu.erf", "one"}, {p + "gelu.add"});
    b.node("Mul", {fc1, p + "gelu.add"}, {p + "gelu.mul"});
    b.node("Mul", {p + "gelu.mul", "half"}, {p + "gelu"});
    const std::string fc2 = linear(b, p + "gelu", p + "fc2", kFf, kHidden, rng);
    b.node("Add", {h, fc2}, {p + "res2"});
    x = layer_norm(b, p + "res2", p + "ln2");
  }
  b.output(layer_norm(b, x, "y"));
  return b.bytes();
}

ImportedModel encoder(int layers) {
  return import_model(parse_model(encoder_bytes(layers), "bert.onnx", "."));
}

core::CoreSpec tpu_v3() {
  return system::load_machine_spec(std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v3-like.json")
      .core;
}

Tensor token_ids() {
  SplitMix64 rng(7);
  Tensor ids{{1, kSeq}, true, {}, {}};
  for (int64_t k = 0; k < kSeq; ++k)
    ids.i.push_back(static_cast<int64_t>(rng.unit() * static_cast<double>(kVocab)));
  return ids;
}

// One layer: nested (instruction memory below the one-level program) against one level, bit for
// bit, and against the host fp32 executor within the bf16 error of the full model's docs.
TEST(BertEncoder, NestedLayerIsBitExactAndWithinBf16OfTheHost) {
  const ImportedModel m = encoder(1);
  core::CoreSpec spec = tpu_v3();
  spec.imem_bundles = 1 << 20;
  const int64_t one_level = static_cast<int64_t>(compile_inference(m, spec).program.code.size());
  const ChipRun straight = run_on_chip(m, spec, token_ids());
  spec.imem_bundles = one_level / 2;
  const int64_t rolled = static_cast<int64_t>(compile_inference(m, spec).program.code.size());
  SCOPED_TRACE(std::to_string(one_level) + " -> " + std::to_string(rolled) + " bundles");
  const ChipRun nested = run_on_chip(m, spec, token_ids());
  EXPECT_EQ(nested.output, straight.output);
  // Loops cost their taken branches, setup and interlocks: within 1% here.
  EXPECT_LE(static_cast<double>(nested.cycles), 1.01 * static_cast<double>(straight.cycles));

  const Tensor host = run_on_host(m, {token_ids()})[0];
  ASSERT_EQ(nested.output.size(), host.f.size());
  double scale = 0, error = 0;
  for (size_t k = 0; k < host.f.size(); ++k) {
    scale = std::max(scale, std::fabs(host.f[k]));
    error = std::max(error, std::fabs(nested.output[k] - host.f[k]));
  }
  EXPECT_LT(error, 1e-2 * scale) << "largest error " << error << " of scale " << scale;
}

// Twelve layers at the default instruction memory: the layers' code is the same but for
// addresses, so the program is the embedding, the final norm and twelve times a layer's code,
// measured as the difference between two layers' nested program and one's.
TEST(BertEncoder, TwelveLayersFitTheDefaultInstructionMemory) {
  core::CoreSpec spec = tpu_v3();
  const int64_t imem = spec.imem_bundles;
  const ImportedModel m1 = encoder(1), m2 = encoder(2);
  const auto bundles = [&](const ImportedModel& m) {
    return static_cast<int64_t>(compile_inference(m, spec).program.code.size());
  };
  spec.imem_bundles = 1 << 20;
  spec.imem_bundles = bundles(m1) - 1;  // below one layer's one-level program: rolled nested
  const int64_t one = bundles(m1), two = bundles(m2);
  const int64_t twelve = one + 11 * (two - one);
  EXPECT_LE(twelve, imem) << "one layer " << one << ", two " << two;
}

}  // namespace
}  // namespace tessera::onnx_import
