// Importer mappings built from slices, concats and reduce_max (models built in C++): Pad in
// reflect and edge modes, MaxPool with a rectangular kernel and a stride per dim, Clip with bounds
// that are graph inputs, Where with a condition that is a graph input. Each is checked against
// hand-computed values on the host executor and again on the simulated chip (graph_on_chip.h),
// where these ops are exact.
#include <limits>

#include <gtest/gtest.h>

#include "model_builder.h"
#include "onnx/graph_on_chip.h"
#include "onnx/host_run.h"

namespace tessera::onnx_import {
namespace {

using testing::OnnxBuilder;

Tensor floats(graph::Shape shape, std::vector<double> v) {
  return Tensor{std::move(shape), false, std::move(v), {}};
}

// The model's one output on the host and on the chip, both expected to equal `want`.
void expect_output(const OnnxBuilder& b, const std::vector<Tensor>& inputs,
                   const std::vector<double>& want) {
  const ImportedModel m = import_model(parse_model(b.bytes(), "m.onnx", "."));
  const Tensor host = run_on_host(m, inputs)[0];
  EXPECT_EQ(host.f, want) << "host";
  const Tensor chip = run_graph_on_chip(m, inputs, core::CoreSpec{})[0];
  EXPECT_EQ(chip.f, want) << "chip";
}

TEST(OnnxWindowPadWhere, ReflectAndEdgePad) {
  for (const char* mode : {"reflect", "edge"}) {
    OnnxBuilder b;
    b.input("x", {2, 3})
        .init_ints("pads", {1, 2, 0, 1});  // rows: 1 before; cols: 2 before, 1 after
    OnnxBuilder::attr_string(b.node("Pad", {"x", "pads"}, {"y"}), "mode", mode);
    b.output("y");
    const std::vector<double> reflect = {6, 5, 4, 5, 6, 5,   // row 1 mirrored
                                         3, 2, 1, 2, 3, 2,   // row 0
                                         6, 5, 4, 5, 6, 5};  // row 1
    const std::vector<double> edge = {1, 1, 1, 2, 3, 3,      // row 0 repeated
                                      1, 1, 1, 2, 3, 3,      // row 0
                                      4, 4, 4, 5, 6, 6};     // row 1
    SCOPED_TRACE(mode);
    expect_output(b, {floats({2, 3}, {1, 2, 3, 4, 5, 6})},
                  std::string(mode) == "reflect" ? reflect : edge);
  }
}

TEST(OnnxWindowPadWhere, MaxPoolWithRectangularKernelAndStridesPerDim) {
  OnnxBuilder b;
  b.input("x", {1, 1, 3, 4});
  onnx::NodeProto& pool = b.node("MaxPool", {"x"}, {"y"});
  OnnxBuilder::attr(pool, "kernel_shape", {2, 3});
  OnnxBuilder::attr(pool, "strides", {1, 2});
  OnnxBuilder::attr(pool, "pads", {0, 1, 0, 0});  // one column of -inf before
  b.output("y");
  const double inf = std::numeric_limits<double>::infinity();
  // Rows 0-1 and 1-2; columns -1..1 and 1..3.
  expect_output(b, {floats({1, 1, 3, 4}, {1, 7, 2, 0, 5, -inf, 3, 8, -1, 4, 6, 2})}, {7, 8, 5, 8});
}

TEST(OnnxWindowPadWhere, ClipWithBoundsThatAreGraphInputs) {
  OnnxBuilder b;
  b.input("x", {5}).input("lo", {}).input("hi", {});
  b.node("Clip", {"x", "lo", "hi"}, {"y"});
  b.output("y");
  expect_output(b, {floats({5}, {-3, -1, 0.5, 2, 9}), floats({}, {-1.5}), floats({}, {2})},
                {-1.5, -1, 0.5, 2, 2});
}

TEST(OnnxWindowPadWhere, WhereWithAConditionThatIsAGraphInput) {
  const double inf = std::numeric_limits<double>::infinity();
  OnnxBuilder b;
  b.input("cond", {2, 3}, onnx::TensorProto::BOOL).input("x", {2, 3}).input("z", {3});
  b.init("fill", {}, {-std::numeric_limits<float>::infinity()});
  b.node("Where", {"cond", "fill", "x"}, {"masked"});  // masked_fill(cond, -inf)
  b.node("Where", {"cond", "x", "z"}, {"y"});          // graph operands, z broadcast
  b.output("masked").output("y");
  const ImportedModel m = import_model(parse_model(b.bytes(), "m.onnx", "."));
  Tensor cond{{2, 3}, true, {}, {1, 0, 0, 1, 1, 0}};
  const std::vector<Tensor> in = {cond, floats({2, 3}, {1, 2, 3, 4, 5, 6}),
                                  floats({3}, {-7, -8, -9})};
  const std::vector<double> masked = {-inf, 2, 3, -inf, -inf, 6}, y = {1, -8, -9, 4, 5, -9};
  const std::vector<Tensor> host = run_on_host(m, in), chip = run_graph_on_chip(m, in, {});
  EXPECT_EQ(host[0].f, masked);
  EXPECT_EQ(host[1].f, y);
  EXPECT_EQ(chip[0].f, masked);
  EXPECT_EQ(chip[1].f, y);
}

}  // namespace
}  // namespace tessera::onnx_import
