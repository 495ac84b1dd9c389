#include "graph/model.h"

#include <cmath>

#include <gtest/gtest.h>

#include "common/error.h"
#include "graph/model_json.h"
#include "support/bad_paths.h"
#include "support/error_of.h"

namespace tessera::graph {
namespace {

using testing::error_of;

const std::string kData = std::string(TESSERA_SOURCE_DIR) + "/data/graph/";

int64_t param_count(const Model& m) {
  int64_t n = 0;
  for (int p : m.params) n += num_elements(m.graph.value(p).shape);
  return n;
}

TEST(Zoo, MlpAndCnnHaveTheIssueArchitectures) {
  const Model mlp = build_model(zoo_spec("mlp"), 128);
  EXPECT_EQ(param_count(mlp), 784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10);
  EXPECT_EQ(mlp.graph.value(mlp.input).shape, (Shape{128, 784}));
  EXPECT_EQ(mlp.graph.value(mlp.logits).shape, (Shape{128, 10}));
  const Model cnn = build_model(zoo_spec("cnn"), 2);
  EXPECT_EQ(cnn.graph.value(cnn.graph.find_value("conv1.w")).shape, (Shape{5, 5, 1, 32}));
  EXPECT_EQ(cnn.graph.value(cnn.graph.find_value("conv2.w")).shape, (Shape{5, 5, 32, 64}));
  EXPECT_EQ(cnn.graph.value(cnn.graph.find_value("dense1.w")).shape, (Shape{3136, 10}));
  EXPECT_EQ(param_count(cnn), 5 * 5 * 32 + 32 + 5 * 5 * 32 * 64 + 64 + 3136 * 10 + 10);
  EXPECT_EQ(cnn.graph.value(cnn.loss).shape, Shape{});
}

TEST(Zoo_bad, UnknownModelListsTheKnownOnes) {
  EXPECT_EQ(error_of([] { zoo_spec("resnet"); }),
            "model zoo: unknown model 'resnet' (known: mlp, cnn, cnn_small)");
}

TEST(Init, KaimingUniformBoundsPerLayerAndDeterministic) {
  const Model m = build_model(zoo_spec("cnn_small"), 1);
  const auto a = init_params(m, 0), b = init_params(m, 0), c = init_params(m, 1);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (size_t i = 0; i < m.params.size(); ++i) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(m.fan_in[i]));
    float lo = 0, hi = 0;
    double sum = 0;
    for (float x : a[i]) {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      sum += x;
    }
    const std::string name = m.graph.value(m.params[i]).name;
    EXPECT_LE(hi, bound) << name;
    EXPECT_GE(lo, -bound) << name;
    if (a[i].size() >= 100) {  // wide enough to see the whole range and a centred mean
      EXPECT_GT(hi, 0.9 * bound) << name;
      EXPECT_LT(lo, -0.9 * bound) << name;
      EXPECT_LT(std::abs(sum / a[i].size()), 0.1 * bound) << name;
    }
  }
  EXPECT_EQ(m.fan_in, (std::vector<int64_t>{25, 25, 100, 100, 392, 392}));
}

TEST(ModelJson, FilesDescribeTheSameGraphsAsTheZoo) {
  for (const char* name : {"mlp", "cnn_small"}) {
    const ModelSpec spec = read_model_json(kData + name + ".json");
    EXPECT_EQ(build_model(spec, 3).graph.dump(), build_model(zoo_spec(name), 3).graph.dump())
        << name;
  }
}

TEST(ModelJson_bad, ErrorsNameTheFileTheEntryAndWhy) {
  auto parse = [](const std::string& text) {
    return error_of([&] { parse_model_json(text, "m.json"); });
  };
  const std::string head = R"("name": "m", "input": [4], "classes": 3, )";
  EXPECT_EQ(parse("{\"name\": "), "m.json: byte 10: JSON syntax error");
  EXPECT_EQ(parse("[1]"),
            "m.json: the top level must be an object with name, input, classes, layers");
  EXPECT_EQ(parse("{" + head + R"("layers": [{"op": "dense", "units": 3}], "lr": 1})"),
            "m.json: unknown key 'lr' (allowed: classes, input, layers, name)");
  EXPECT_EQ(parse("{" + head + R"("layers": [{"op": "relu"}, {"op": "softmax"}]})"),
            "m.json: layers[1].op: unknown op 'softmax' (known: dense, conv2d, relu, maxpool2d, "
            "flatten)");
  EXPECT_EQ(parse("{" + head + R"("layers": [{"op": "dense"}]})"),
            "m.json: layers[0].units: missing required key");
  EXPECT_EQ(parse("{" + head + R"("layers": [{"op": "dense", "units": "ten"}]})"),
            "m.json: layers[0].units: must be an integer, got \"ten\"");
  EXPECT_EQ(parse("{" + head + R"("layers": [{"op": "conv2d", "filters": 2, "kernel": 0}]})"),
            "m.json: layers[0].kernel: must be in [1, 64], got 0");
  EXPECT_EQ(parse("{" + head + R"("layers": [{"op": "relu", "units": 2}]})"),
            "m.json: layers[0]: unknown key 'units' (allowed: op)");
  EXPECT_EQ(parse("{" + head + R"("layers": [{"units": 2}]})"),
            "m.json: layers[0]: missing required key 'op'");
  EXPECT_EQ(parse(R"({"name": "m", "input": [0], "classes": 3, "layers": [{"op": "relu"}]})"),
            "m.json: input[0]: must be an integer in [1, 16777216], got 0");
  EXPECT_EQ(parse(R"({"name": "m", "input": [4], "layers": [{"op": "relu"}]})"),
            "m.json: classes: missing required key");
  EXPECT_EQ(parse("{" + head + R"("layers": []})"),
            "m.json: layers: missing or not a non-empty array");
  EXPECT_EQ(error_of([] { read_model_json(kData + "does_not_exist.json"); }),
            kData + "does_not_exist.json: cannot open model file");
}

TEST(ModelJson, CommandLineNamesAZooModelOrAJsonFile) {
  EXPECT_EQ(build_model(model_spec("mlp"), 2).graph.dump(),
            build_model(zoo_spec("mlp"), 2).graph.dump());
  EXPECT_EQ(build_model(model_spec(kData + "cnn_small.json"), 2).graph.dump(),
            build_model(zoo_spec("cnn_small"), 2).graph.dump());
  EXPECT_EQ(error_of([] { model_spec("nope"); }), error_of([] { zoo_spec("nope"); }));
  EXPECT_EQ(error_of([] { model_spec("/nonexistent/m.json"); }),
            "/nonexistent/m.json: cannot open model file");
}

TEST(ModelJson_bad, NumberOverflowNamesTheFileAndByte) {
  EXPECT_EQ(error_of([] {
              parse_model_json(R"({"name": "m", "input": [1e400], "classes": 3, "layers": []})",
                               "m.json");
            }),
            "m.json: byte 25: number overflow parsing '1e400'");
}

TEST(ModelJson_bad, DirectoryOrEmptyFileIsNamed) {
  const testing::BadPaths bad = testing::bad_paths("model-json");
  EXPECT_EQ(error_of([&] { read_model_json(bad.directory); }),
            bad.directory + ": is a directory, not a file");
  EXPECT_EQ(error_of([&] { read_model_json(bad.empty); }), bad.empty + ": is empty");
}

TEST(ModelJson_bad, ShapeProblemsNameTheLayer) {
  const ModelSpec spec = read_model_json(kData + "bad_missing_flatten.json");
  EXPECT_EQ(error_of([&] { build_model(spec, 2); }),
            "model 'no_flatten': layer 1 (dense): needs a flat input [batch, features], got [2, "
            "28, 28, 4] "
            "(add a flatten layer)");
  const ModelSpec wrong_logits{"w", {6}, 10, {{LayerKind::kDense, 7}}};
  EXPECT_EQ(error_of([&] { build_model(wrong_logits, 2); }),
            "model 'w': the last layer's output [2, 7] must be the logits [2, 10]");
  const ModelSpec huge{"h", {16777216, 16777216, 16777216}, 2, {{LayerKind::kFlatten}}};
  EXPECT_EQ(
      error_of([&] { build_model(huge, 1); }),
      "model 'h': input: value 'x': shape [1, 16777216, 16777216, 16777216] has more than 2^30 "
      "elements");
  const ModelSpec wide{"wide", {1 << 20}, 2, {{LayerKind::kDense, 1 << 20}}};
  EXPECT_EQ(
      error_of([&] { build_model(wide, 1); }),
      "model 'wide': layer 0 (dense): value 'dense1.w': shape [1048576, 1048576] has more than "
      "2^30 elements");
  const ModelSpec big_kernel{"k", {4, 4, 1}, 2, {{LayerKind::kConv2D, 2, 7, 1, 0}}};
  EXPECT_EQ(error_of([&] { build_model(big_kernel, 1); }),
            "model 'k': layer 0 (conv2d): conv2d 'conv1.conv': kernel [7, 7, 1, 2] larger than "
            "padded input "
            "[1, 4, 4, 1] (pad 0)");
}

}  // namespace
}  // namespace tessera::graph
