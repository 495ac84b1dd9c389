// The ResNet builders: torchvision's sizes (parameter and state counts, shapes), the host forward
// in training and evaluation mode, the folded inference graph, the running averages and errors.
#include "graph/resnet_model.h"

#include <cmath>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/splitmix64.h"
#include "graph/autodiff.h"
#include "graph/executor.h"
#include "support/error_of.h"

namespace tessera::graph {
namespace {

using testing::error_of;

int64_t count(const Graph& g, const std::vector<int>& values) {
  int64_t n = 0;
  for (int v : values) n += num_elements(g.value(v).shape);
  return n;
}

std::vector<int> state_values(const Model& m) {
  std::vector<int> out;
  for (const Model::State& s : m.state) out.push_back(s.value);
  return out;
}

TEST(ResNetModel, TorchvisionSizes) {
  // torchvision.models.resnet18() / resnet50(): parameters and BatchNorm buffers (running mean
  // and var, not num_batches_tracked).
  const struct {
    const char* name;
    int64_t params, state;
    size_t bns;
  } cases[] = {{"resnet18", 11'689'512, 9'600, 20}, {"resnet50", 25'557'032, 53'120, 53}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const Model m = build_resnet(resnet_spec(c.name), 1);
    EXPECT_EQ(m.name, c.name);
    EXPECT_EQ(count(m.graph, m.params), c.params);
    EXPECT_EQ(count(m.graph, state_values(m)), c.state);
    EXPECT_EQ(m.state.size(), 2 * c.bns);
    EXPECT_EQ(m.graph.value(m.input).shape, (Shape{1, 224, 224, 3}));
    EXPECT_EQ(m.graph.value(m.logits).shape, (Shape{1, 1000}));
    EXPECT_EQ(m.graph.value(m.graph.find_value("maxpool")).shape, (Shape{1, 56, 56, 64}));
    for (const Model::State& s : m.state) EXPECT_GE(s.update, 0);
  }
  const Model r50 = build_resnet(resnet_spec("resnet50"), 2);
  EXPECT_EQ(r50.graph.value(r50.graph.find_value("layer4.2.relu")).shape, (Shape{2, 7, 7, 2048}));
  EXPECT_EQ(r50.graph.value(r50.graph.find_value("layer2.0.conv2")).shape, (Shape{2, 28, 28, 128}));
}

ResNetSpec small(int depth) {
  return {.depth = depth, .classes = 10, .image = 32, .width = 4};
}

std::vector<float> random_images(const Model& m, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<float> x(static_cast<size_t>(num_elements(m.graph.value(m.input).shape)));
  for (float& e : x) e = static_cast<float>(2.0 * rng.unit() - 1.0);
  return x;
}

void bind_values(Executor<float>& ex, const Model& m, const std::vector<std::vector<float>>& params,
                 const std::vector<std::vector<float>>& state, const std::vector<float>& x) {
  ex.set(m.input, x);
  if (m.labels >= 0) ex.set_labels(m.labels, std::vector<int32_t>(static_cast<size_t>(m.batch), 0));
  for (size_t i = 0; i < params.size(); ++i) ex.set(m.params[i], params[i]);
  for (size_t i = 0; i < state.size(); ++i) ex.set(m.state[i].value, state[i]);
}

TEST(ResNetModel, FoldedGraphEqualsTheEvaluationGraph) {
  for (int depth : {18, 50}) {
    SCOPED_TRACE(depth);
    const Model eval = build_resnet(small(depth), 2, BatchNormMode::kEval);
    const auto params = init_resnet_params(eval, 7);
    auto state = initial_resnet_state(eval);
    SplitMix64 rng(3);  // statistics that are not the initial ones
    for (size_t i = 0; i < state.size(); ++i)
      for (float& e : state[i])
        e = static_cast<float>(i % 2 == 0 ? rng.unit() - 0.5 : 0.5 + rng.unit());
    const std::vector<float> x = random_images(eval, 11);
    Executor<float> ex(eval.graph, Numerics::kF32);
    bind_values(ex, eval, params, state, x);
    ex.run();
    const std::vector<float> want = ex.get(eval.logits);

    const Graph folded = resnet_folded_graph(small(depth), 2, eval, params, state);
    EXPECT_TRUE(folded.params().empty());
    ASSERT_EQ(folded.inputs().size(), 1u);
    Executor<float> fx(folded, Numerics::kF32);
    fx.set(folded.inputs()[0], x);
    fx.run();
    const std::vector<float>& got = fx.get(folded.nodes().back().output);
    ASSERT_EQ(got.size(), 20u);
    double scale = 0;
    for (float v : want) scale = std::max(scale, std::abs(static_cast<double>(v)));
    EXPECT_GT(scale, 1e-3);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4 * scale) << i;
  }
}

TEST(ResNetModel, TrainingModeNormalisesWithBatchStatisticsAndUpdatesTheRunningAverages) {
  const Model m = build_resnet(small(18), 3);
  const auto params = init_resnet_params(m, 1);
  const auto state = initial_resnet_state(m);
  Executor<double> ex(m.graph, Numerics::kF64);
  const std::vector<float> xf = random_images(m, 5);
  ex.set(m.input, std::vector<double>(xf.begin(), xf.end()));
  ex.set_labels(m.labels, {1, 2, 3});
  for (size_t i = 0; i < params.size(); ++i)
    ex.set(m.params[i], std::vector<double>(params[i].begin(), params[i].end()));
  for (size_t i = 0; i < state.size(); ++i)
    ex.set(m.state[i].value, std::vector<double>(state[i].begin(), state[i].end()));
  ex.run();
  // bn1 over conv1's [3, 16, 16, 4] output: per channel mean 0 and variance 1 (gamma 1, beta 0),
  // running mean 0.1 * mean, running var 0.9 + 0.1 * unbiased var.
  const std::vector<double>& conv = ex.get(m.graph.find_value("conv1"));
  const std::vector<double>& bn = ex.get(m.graph.find_value("bn1"));
  const int c = 4;
  const size_t r = conv.size() / c;
  ASSERT_EQ(r, 3u * 16 * 16);
  for (int k = 0; k < c; ++k) {
    double mean = 0, var = 0, y_mean = 0, y_var = 0;
    for (size_t i = 0; i < r; ++i) mean += conv[i * c + k] / r;
    for (size_t i = 0; i < r; ++i) var += (conv[i * c + k] - mean) * (conv[i * c + k] - mean) / r;
    for (size_t i = 0; i < r; ++i) y_mean += bn[i * c + k] / r;
    for (size_t i = 0; i < r; ++i) y_var += bn[i * c + k] * bn[i * c + k] / r;
    EXPECT_NEAR(y_mean, 0.0, 1e-12);
    EXPECT_NEAR(y_var, var / (var + 1e-5), 1e-9);
    EXPECT_NEAR(ex.get(m.state[0].update)[k], 0.1 * mean, 1e-12);
    EXPECT_NEAR(ex.get(m.state[1].update)[k], 0.9 + 0.1 * var * r / (r - 1), 1e-12);
  }
  EXPECT_EQ(m.graph.value(m.state[0].value).name, "bn1.running_mean");
  EXPECT_EQ(m.graph.value(m.state[1].update).name, "bn1.running_var.next");
  const TrainingGraph t = build_training_graph(m.graph, m.loss);  // every parameter has a gradient
  EXPECT_EQ(t.grads.size(), m.params.size());
}

// The largest |got - want| relative to the largest |want|.
double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  EXPECT_EQ(got.size(), want.size());
  double err = 0, scale = 0;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    err = std::max(err, std::abs(static_cast<double>(got[i]) - want[i]));
    scale = std::max(scale, std::abs(static_cast<double>(want[i])));
  }
  return err / scale;
}

// data/graph/resnet_small_reference.json (scripts/zoo-resnet-reference): PyTorch 1.13's
// torchvision blocks at width 4 with the zoo's initial weights, in eval mode and in one
// training-mode forward (logits and every running average after it). fp32 in a different
// summation order: the deepest layers' batch statistics (8 values per channel in ResNet-50's last
// stage) differ by up to 2.5e-5 of their scale.
TEST(ResNetModel, SmallVariantsMatchPyTorch) {
  std::ifstream f(std::string(TESSERA_SOURCE_DIR) + "/data/graph/resnet_small_reference.json");
  ASSERT_TRUE(f) << "reference file missing";
  const nlohmann::json ref = nlohmann::json::parse(f);
  for (int depth : {18, 50}) {
    SCOPED_TRACE(depth);
    const nlohmann::json& r = ref.at("resnet" + std::to_string(depth));
    const ResNetSpec spec{.depth = depth,
                          .classes = ref.at("classes"),
                          .image = ref.at("image"),
                          .width = ref.at("width")};
    const int batch = ref.at("batch");
    const Model train = build_resnet(spec, batch);
    const Model eval = build_resnet(spec, batch, BatchNormMode::kEval);
    const auto params = init_resnet_params(train, ref.at("param_seed").get<uint64_t>());
    const auto state = initial_resnet_state(train);
    const std::vector<float> x = random_images(train, ref.at("input_seed").get<uint64_t>());

    Executor<float> ev(eval.graph, Numerics::kF32);
    bind_values(ev, eval, params, state, x);
    ev.run();
    EXPECT_LT(relative_error(ev.get(eval.logits), r.at("eval_logits")), 1e-5);

    Executor<float> tr(train.graph, Numerics::kF32);
    bind_values(tr, train, params, state, x);
    tr.run();
    EXPECT_LT(relative_error(tr.get(train.logits), r.at("train_logits")), 1e-4);
    ASSERT_EQ(r.at("state").size(), train.state.size());
    for (size_t i = 0; i < train.state.size(); ++i)
      EXPECT_LT(relative_error(tr.get(train.state[i].update), r.at("state")[i]), 1e-4)
          << train.graph.value(train.state[i].value).name;
  }
}

TEST(ResNetModel, InitialisationFollowsTorchvision) {
  const Model m = build_resnet(small(50), 1);
  const auto p = init_resnet_params(m, 2);
  for (size_t i = 0; i < p.size(); ++i) {
    const Value& v = m.graph.value(m.params[i]);
    double sum2 = 0, largest = 0;
    for (float e : p[i]) {
      sum2 += static_cast<double>(e) * e;
      largest = std::max(largest, std::abs(static_cast<double>(e)));
    }
    const double rms = std::sqrt(sum2 / static_cast<double>(p[i].size()));
    if (v.name.ends_with(".gamma")) {
      EXPECT_EQ(rms, 1.0) << v.name;
    } else if (v.name.ends_with(".beta")) {
      EXPECT_EQ(largest, 0.0) << v.name;
    } else if (v.name == "fc.w" || v.name == "fc.b") {
      EXPECT_LE(largest, 1.0 / std::sqrt(128.0)) << v.name;
    } else if (p[i].size() >= 1000) {  // conv: N(0, 2 / (KH KW Cout))
      const double sd = std::sqrt(2.0 / static_cast<double>(v.shape[0] * v.shape[1] * v.shape[3]));
      EXPECT_NEAR(rms, sd, 0.1 * sd) << v.name;
    }
  }
}

TEST(ResNetModel, BadSizesAreErrors) {
  EXPECT_NE(error_of([] { build_resnet({.depth = 34}, 1); }).find("depth must be 18 or 50"),
            std::string::npos);
  EXPECT_NE(error_of([] { build_resnet({.image = 16}, 1); }).find("image must be >= 32, got 16"),
            std::string::npos);
  EXPECT_NE(error_of([] { build_resnet({}, 0); }).find("batch must be >= 1"), std::string::npos);
  EXPECT_NE(error_of([] { resnet_spec("resnet34"); }).find("not a ResNet"), std::string::npos);
  EXPECT_NE(error_of([] {
              build_resnet({.image = 32, .channels = 0}, 1);
            }).find("channels must be >= 1, got 0"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              build_resnet({.image = 32, .input = 40}, 1);
            }).find("input side 40 exceeds the image side 32"),
            std::string::npos);
}

// Fashion-MNIST's [28, 28, 1] images: x keeps their shape, a pad node centres them in 32 x 32
// zeros, and the network computes the same logits as on the padded images given directly.
TEST(ResNetModel, SmallerOneChannelImagesAreZeroPaddedToTheImageSide) {
  const ResNetSpec padded{
      .depth = 18, .classes = 10, .image = 32, .width = 4, .channels = 1, .input = 28};
  ResNetSpec direct = padded;
  direct.input = 0;
  const Model a = build_resnet(padded, 2, BatchNormMode::kEval);
  const Model b = build_resnet(direct, 2, BatchNormMode::kEval);
  EXPECT_EQ(a.graph.value(a.input).shape, (Shape{2, 28, 28, 1}));
  EXPECT_EQ(b.graph.value(b.input).shape, (Shape{2, 32, 32, 1}));
  EXPECT_TRUE(a.graph.has_value("pad"));
  std::vector<float> small(2 * 28 * 28), big(2 * 32 * 32, 0.0f);
  for (size_t i = 0; i < small.size(); ++i) small[i] = static_cast<float>(i % 17) / 17.0f - 0.5f;
  for (int n = 0; n < 2; ++n)
    for (int y = 0; y < 28; ++y)
      for (int x = 0; x < 28; ++x)
        big[static_cast<size_t>((n * 32 + y + 2) * 32 + x + 2)] =
            small[static_cast<size_t>((n * 28 + y) * 28 + x)];
  const std::vector<std::vector<float>> params = init_resnet_params(a, 3);
  const std::vector<std::vector<float>> state = initial_resnet_state(a);
  std::vector<float> logits[2];
  for (int k = 0; k < 2; ++k) {
    const Model& m = k == 0 ? a : b;
    Executor<float> ex(m.graph, Numerics::kF32);
    for (size_t i = 0; i < params.size(); ++i) ex.set(m.params[i], params[i]);
    for (size_t i = 0; i < state.size(); ++i) ex.set(m.state[i].value, state[i]);
    ex.set(m.input, k == 0 ? small : big);
    ex.set_labels(m.labels, {0, 1});
    ex.run();
    logits[k] = ex.get(m.logits);
  }
  EXPECT_EQ(logits[0], logits[1]);
}

}  // namespace
}  // namespace tessera::graph
