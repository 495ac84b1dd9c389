// The importer on models built in C++: op mappings checked against the host executor, constant
// folding of shape subgraphs, symbolic dims, layout permutes that cancel; and the `_bad` inputs.
#include "onnx/importer.h"

#include <cmath>

#include <gtest/gtest.h>

#include "model_builder.h"
#include "onnx/host_run.h"
#include "support/error_of.h"
#include "support/temp_dir.h"

namespace tessera::onnx_import {
namespace {

using testing::OnnxBuilder;

ImportedModel import_bytes(const OnnxBuilder& b, const ImportOptions& o = {}) {
  return import_model(parse_model(b.bytes(), "m.onnx", "."), o);
}

ImportOptions shape_of(const std::string& input, graph::Shape shape) {
  ImportOptions o;
  o.input_shapes[input] = std::move(shape);
  return o;
}

Tensor floats(graph::Shape shape, std::vector<double> v) {
  return Tensor{std::move(shape), false, std::move(v), {}};
}

int count_ops(const graph::Graph& g, graph::OpKind op) {
  int n = 0;
  for (const graph::Node& node : g.nodes()) n += node.op == op;
  return n;
}

// An initializer "w" [2] stored in the external file `location` with the given extra keys.
void add_external_w(OnnxBuilder& b, const std::vector<std::pair<std::string, std::string>>& keys) {
  auto* w = b.proto().mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(2);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [k, v] : keys) {
    auto* kv = w->add_external_data();
    kv->set_key(k);
    kv->set_value(v);
  }
}

TEST(OnnxImport, GemmReluMatchesHandComputedValues) {
  OnnxBuilder b;
  b.input("x", {1, 2}).init("w", {3, 2}, {1, 0, 0, 1, 1, 1}).init("bias", {3}, {0, 0, -10});
  OnnxBuilder::attr(b.node("Gemm", {"x", "w", "bias"}, {"h"}), "transB", 1);
  b.node("Relu", {"h"}, {"y"});
  b.output("y");
  const ImportedModel m = import_bytes(b);
  const std::vector<Tensor> out = run_on_host(m, {floats({1, 2}, {2, -3})});
  ASSERT_EQ(out[0].shape, (graph::Shape{1, 3}));
  EXPECT_EQ(out[0].f, (std::vector<double>{2, 0, 0}));  // relu(2, -3, 2 - 3 - 10)
}

TEST(OnnxImport, ShapeSubgraphFoldsIntoOneReshape) {
  // y = Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])): a flatten as exporters write it.
  OnnxBuilder b;
  b.input("x", {2, 3, 4}).init_ints("zero_axis", {0}).init_ints("minus_one", {-1});
  b.node("Shape", {"x"}, {"s"});
  auto& g = b.node("Gather", {"s", "idx"}, {"n"});
  OnnxBuilder::attr(g, "axis", 0);
  auto* idx = b.proto().mutable_graph()->add_initializer();
  idx->set_name("idx");
  idx->set_data_type(onnx::TensorProto::INT64);
  idx->add_int64_data(0);
  b.node("Unsqueeze", {"n", "zero_axis"}, {"n1"});
  OnnxBuilder::attr(b.node("Concat", {"n1", "minus_one"}, {"shape"}), "axis", 0);
  b.node("Reshape", {"x", "shape"}, {"y"});
  b.output("y");
  const ImportedModel m = import_bytes(b);
  EXPECT_EQ(m.graph.nodes().size(), 1u);
  EXPECT_EQ(m.graph.value(m.outputs[0].value).shape, (graph::Shape{2, 12}));
}

TEST(OnnxImport, SymbolicBatchIsBoundByInputShape) {
  OnnxBuilder b;
  b.input("x", {-1, 4}).init("w", {4, 2}, std::vector<float>(8, 0.5f));
  b.node("MatMul", {"x", "w"}, {"y"});
  b.output("y");
  const ImportedModel m = import_bytes(b, shape_of("x", {5, 4}));
  EXPECT_EQ(m.graph.value(m.outputs[0].value).shape, (graph::Shape{5, 2}));
}

TEST(OnnxImport, ConsecutiveConvolutionsShareOneLayoutPermutePair) {
  OnnxBuilder b;
  b.input("x", {1, 2, 5, 5}).init("w1", {3, 2, 3, 3}, std::vector<float>(54, 0.1f));
  b.init("w2", {2, 3, 1, 1}, std::vector<float>(6, 0.2f));
  OnnxBuilder::attr(b.node("Conv", {"x", "w1"}, {"c1"}), "pads", {1, 1, 1, 1});
  b.node("Relu", {"c1"}, {"r"});
  b.node("Conv", {"r", "w2"}, {"y"});
  b.output("y");
  const ImportedModel m = import_bytes(b);
  EXPECT_EQ(count_ops(m.graph, graph::OpKind::kConv2D), 2);
  // The relu runs in NHWC between them: only the input's and the output's permutes remain.
  EXPECT_EQ(count_ops(m.graph, graph::OpKind::kPermute), 2);
  const std::vector<Tensor> out =
      run_on_host(m, {floats({1, 2, 5, 5}, std::vector<double>(50, 1.0))});
  // Center pixel: conv1 = 18 * 0.1 = 1.8 per channel; conv2 = 3 * 0.2 * 1.8.
  EXPECT_NEAR(out[0].f[12], 1.08, 1e-5);
}

// --- bad input

TEST(OnnxImportBad, TruncatedFileIsNotAnOnnxModel) {
  OnnxBuilder b;
  b.input("x", {1}).node("Relu", {"x"}, {"y"});
  b.output("y");
  const std::string bytes = b.bytes();
  EXPECT_EQ(
      testing::error_of([&] { parse_model(bytes.substr(0, bytes.size() - 3), "m.onnx", "."); }),
      "m.onnx: not an ONNX model (the bytes do not parse as an onnx.ModelProto)");
}

TEST(OnnxImportBad, TextFileIsNotAnOnnxModel) {
  EXPECT_EQ(testing::error_of([] { parse_model("hello, world\n", "m.onnx", "."); }),
            "m.onnx: not an ONNX model (the bytes do not parse as an onnx.ModelProto)");
}

TEST(OnnxImportBad, OpsetAbove17IsRefusedNamingIt) {
  OnnxBuilder b(18);
  b.input("x", {1}).node("Relu", {"x"}, {"y"});
  b.output("y");
  EXPECT_EQ(testing::error_of([&] { parse_model(b.bytes(), "m.onnx", "."); }),
            "m.onnx: opset 18 is not supported (opsets 7 to 17 are)");
}

TEST(OnnxImport, OpsetBelow7ReadsWhenItsOpsAreUnchangedSince) {
  OnnxBuilder b(1);  // GlobalAveragePool has had one version since opset 1
  b.input("x", {1, 2, 1, 2}).node("GlobalAveragePool", {"x"}, {"y"});
  b.output("y");
  const ImportedModel m = import_bytes(b);
  EXPECT_EQ(m.opset, 1);
  const std::vector<Tensor> out = run_on_host(m, {floats({1, 2, 1, 2}, {1, 3, -2, 6})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (graph::Shape{1, 2, 1, 1}));
  EXPECT_EQ(out[0].f, (std::vector<double>{2, 2}));
}

TEST(OnnxImportBad, OpsetBelow7ListsEveryNodeWhoseOpChangedSince) {
  OnnxBuilder b(5);
  b.input("x", {1, 2, 1, 2}).node("Relu", {"x"}, {"r"}, "relu");  // Relu-6 since
  b.node("GlobalAveragePool", {"r"}, {"g"}, "pool");              // unchanged
  b.node("Erf", {"g"}, {"y"}, "erf");                             // from opset 9
  b.output("y");
  EXPECT_EQ(testing::error_of([&] { parse_model(b.bytes(), "m.onnx", "."); }),
            "m.onnx: opset 5 is not supported (opsets 7 to 17 are, and older ones whose ops did "
            "not change since): 2 node(s) differ: Relu 'relu' (changed in opset 6), Erf 'erf' (not "
            "in opset 5)");
}

TEST(OnnxImportBad, OpsetZeroIsRefused) {
  OnnxBuilder b(0);
  b.input("x", {1}).node("Relu", {"x"}, {"y"});
  b.output("y");
  EXPECT_EQ(testing::error_of([&] { parse_model(b.bytes(), "m.onnx", "."); }),
            "m.onnx: opset 0 is not supported (opsets 7 to 17 are)");
}

TEST(OnnxImportBad, EveryUnsupportedOpIsListedInOneError) {
  OnnxBuilder b;
  b.input("x", {2}).node("Relu", {"x"}, {"a"});
  b.node("Celu", {"a"}, {"b"}, "first");
  b.node("HardSwish", {"b"}, {"y"}, "second");
  b.output("y");
  EXPECT_EQ(testing::error_of([&] { import_bytes(b); }),
            "m.onnx: opset 13: 2 node(s) with unsupported op types: Celu 'first', HardSwish "
            "'second'");
}

TEST(OnnxImportBad, EveryUnsupportedAttributeIsListedInOneError) {
  OnnxBuilder b;
  b.input("x", {1, 2, 4, 4}).init("w", {2, 2, 3, 3}, std::vector<float>(36, 1));
  OnnxBuilder::attr(b.node("Conv", {"x", "w"}, {"c"}, "strided"), "strides", {1, 2});
  onnx::NodeProto& pool = b.node("MaxPool", {"x"}, {"p"}, "column_major");
  OnnxBuilder::attr(pool, "kernel_shape", {2, 2});
  OnnxBuilder::attr(pool, "storage_order", 1);
  b.output("c").output("p");
  EXPECT_EQ(testing::error_of([&] { import_bytes(b); }),
            "m.onnx: opset 13: 2 node(s) cannot be converted:\n"
            "  Conv node 'strided': strides [1, 2] (one stride for H and W is supported)\n"
            "  MaxPool node 'column_major': storage_order 1");
}

TEST(OnnxImportBad, MissingExternalDataNamesTensorAndFile) {
  OnnxBuilder b;
  b.input("x", {2}).node("Add", {"x", "w"}, {"y"});
  b.output("y");
  add_external_w(b, {{"location", "weights.bin"}});
  EXPECT_EQ(testing::error_of([&] { parse_model(b.bytes(), "m.onnx", "/nonexistent"); }),
            "m.onnx: tensor 'w': external data file '/nonexistent/weights.bin' cannot be opened");
}

TEST(OnnxImport, ExternalDataIsReadRelativeToTheModel) {
  testing::TempDir dir;
  const float w[2] = {1.5f, -2};
  testing::write_bytes(dir.file("weights.bin"),
                       std::string("pad!") + std::string(reinterpret_cast<const char*>(w), 8));
  OnnxBuilder b;
  b.input("x", {2}).node("Add", {"x", "w"}, {"y"});
  b.output("y");
  add_external_w(b, {{"location", "weights.bin"}, {"offset", "4"}, {"length", "8"}});
  testing::write_bytes(dir.file("m.onnx"), b.bytes());
  const ImportedModel m = import_model(load_model_file(dir.file("m.onnx")));
  EXPECT_EQ(run_on_host(m, {floats({2}, {1, 1})})[0].f, (std::vector<double>{2.5, -1}));
}

TEST(OnnxImportBad, InputShapeContradictingTheGraphNamesTheInput) {
  OnnxBuilder b;
  b.input("x", {-1, 4}).node("Relu", {"x"}, {"y"});
  b.output("y");
  EXPECT_EQ(testing::error_of([&] {
              import_bytes(b, shape_of("x", {2, 5}));
            }),
            "m.onnx: input 'x': --input-shape x=[2, 5] contradicts the graph's [-1, 4] (-1: "
            "symbolic)");
  EXPECT_EQ(testing::error_of([&] { import_bytes(b); }),
            "m.onnx: input 'x': dimension 0 ('d0') is symbolic: bind it with --input-shape x=...");
}

TEST(OnnxImportBad, TensorFileOfTheWrongTypeNamesTheFile) {
  OnnxBuilder b;
  b.input("x", {2}).node("Relu", {"x"}, {"y"});
  b.output("y");
  const ImportedModel m = import_bytes(b);
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(2);
  t.add_int64_data(1);
  t.add_int64_data(2);
  EXPECT_EQ(testing::error_of([&] { input_tensor(m, 0, t, "x.pb"); }),
            "x.pb: holds INT64; input 'x' takes FLOAT");
}

TEST(OnnxImportBad, MalformedInputShapeFlag) {
  EXPECT_EQ(testing::error_of([] { parse_input_shape("x=1x0"); }),
            "--input-shape: 'x=1x0' is not NAME=D1xD2x... with dims >= 1");
  EXPECT_EQ(parse_input_shape("in:0=1x3x224x224").second, (graph::Shape{1, 3, 224, 224}));
}

}  // namespace
}  // namespace tessera::onnx_import
