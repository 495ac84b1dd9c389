// Models exported from PyTorch (scripts/export-models, checked in under data/onnx/ with an input
// and PyTorch's output for it) imported and run on the host fp32 executor: the output matches
// PyTorch's within 1e-5 of its scale and the top-1 class of every row agrees.
//   cnn:           the zoo cnn's layers (conv 5x5, relu, max pool, dense), batch 4 of 1x28x28
//   small_convnet: padded max pooling, folded batch norm, grouped, depthwise and dilated
//                  convolutions, Clip (ReLU6), residual add, average and global average pooling
//   small_ops:     reflect and edge Pad, MaxPool with a rectangular dilated kernel and strides
//                  per dim, 1-D MaxPool and AveragePool (ceil_mode), GELU as erf and as tanh;
//                  also run on the simulated chip, within bf16's 2^-7 of the output's scale
#include <gtest/gtest.h>

#include "onnx/chip_model.h"
#include "onnx/host_run.h"

namespace tessera::onnx_import {
namespace {

const std::string kDir = std::string(TESSERA_SOURCE_DIR) + "/data/onnx/";

// The model's output for its checked-in input, on the host fp32 executor or on the chip,
// against PyTorch's.
OutputMatch run_exported(const std::string& name, bool on_chip = false) {
  const onnx::TensorProto x = read_tensor_file(kDir + name + "_in_0.pb");
  ImportOptions o;
  o.input_shapes[x.name()] = graph::Shape(x.dims().begin(), x.dims().end());
  const ImportedModel m = import_model(load_model_file(kDir + name + ".onnx"), o);
  const Tensor input = input_tensor(m, 0, x, name);
  Tensor y = run_on_host(m, {input}).at(0);
  if (on_chip) {
    const std::vector<float> chip = run_on_chip(m, core::CoreSpec{}, input).output;
    y.f.assign(chip.begin(), chip.end());
  }
  const std::string expected = kDir + name + "_out_0.pb";
  return compare_output(y, from_proto(read_tensor_file(expected), expected));
}

TEST(OnnxPytorchModels, ZooCnnMatchesPytorch) {
  const OutputMatch r = run_exported("cnn");
  EXPECT_LE(r.relative_error(), 1e-5);
  EXPECT_EQ(r.rows, 4);
  EXPECT_EQ(r.top1_agree, r.rows);
}

TEST(OnnxPytorchModels, SmallConvnetMatchesPytorch) {
  const OutputMatch r = run_exported("small_convnet");
  EXPECT_LE(r.relative_error(), 1e-5);
  EXPECT_EQ(r.rows, 2);
  EXPECT_EQ(r.top1_agree, r.rows);
}

TEST(OnnxPytorchModels, SmallOpsMatchPytorchOnTheHostAndTheChip) {
  const OutputMatch host = run_exported("small_ops");
  EXPECT_LE(host.relative_error(), 1e-5);
  EXPECT_EQ(host.rows, 2);
  EXPECT_EQ(host.top1_agree, host.rows);
  const OutputMatch chip = run_exported("small_ops", true);
  EXPECT_LE(chip.relative_error(), 1.0 / 128);
  EXPECT_EQ(chip.top1_agree, chip.rows);
}

}  // namespace
}  // namespace tessera::onnx_import
