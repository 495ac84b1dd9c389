// `tessera infer` and `tessera import` end to end through the built binary: TensorProto files in
// and out, and the exit codes and messages of bad input.
#include <gtest/gtest.h>

#include "model_builder.h"
#include "onnx/host_run.h"
#include "support/cli_run.h"
#include "support/temp_dir.h"

namespace tessera::onnx_import {
namespace {

const std::string kMlp = std::string(TESSERA_SOURCE_DIR) + "/data/onnx/mlp.onnx";

class OnnxCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::cli_binary_exists()) GTEST_SKIP() << "tessera is not built";
  }
};

TEST_F(OnnxCli, InferWritesTheChipOutputAsATensorProto) {
  testing::TempDir dir;
  std::vector<float> x(4 * 64);
  for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(k % 7) / 7.0f - 0.5f;
  write_tensor_file(dir.file("x.pb"), to_proto("x", {4, 64}, x));
  const testing::CliResult r = testing::run_cli(
      "infer --model " + kMlp + " --input x=" + dir.file("x.pb") + " --output " + dir.file("y.pb"));
  ASSERT_EQ(r.status, 0) << r.out;
  const Tensor y = from_proto(read_tensor_file(dir.file("y.pb")), "y.pb");
  ImportOptions o;
  o.input_shapes["x"] = {4, 64};
  const ImportedModel m = import_model(load_model_file(kMlp), o);
  const Tensor host = run_on_host(m, {Tensor{{4, 64}, false, {x.begin(), x.end()}, {}}})[0];
  ASSERT_EQ(y.shape, host.shape);
  for (int64_t k = 0; k < y.size(); ++k) EXPECT_NEAR(y.f[k], host.f[k], 0.02) << k;
}

// ids [2, 3] (INT64) -> Gather on a table [5, 4] (an embedding on the chip) -> Relu -> y.
void write_ids_model(const testing::TempDir& dir, const std::vector<int64_t>& ids) {
  testing::OnnxBuilder b;
  std::vector<float> table(20);
  for (size_t k = 0; k < table.size(); ++k) table[k] = static_cast<float>(k % 7) - 2.5f;
  b.input("ids", {2, 3}, onnx::TensorProto::INT64).init("table", {5, 4}, table);
  b.node("Gather", {"table", "ids"}, {"rows"});
  b.node("Relu", {"rows"}, {"y"});
  b.output("y");
  testing::write_bytes(dir.file("m.onnx"), b.bytes());
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(2);
  t.add_dims(3);
  for (int64_t id : ids) t.add_int64_data(id);
  write_tensor_file(dir.file("ids.pb"), t);
}

TEST_F(OnnxCli, InferWithIntegerIdsRunsTheGatherAsAnEmbedding) {
  testing::TempDir dir;
  write_ids_model(dir, {4, 0, 2, 2, 1, 3});
  const testing::CliResult r =
      testing::run_cli("infer --model " + dir.file("m.onnx") +
                       " --input ids=" + dir.file("ids.pb") + " --output " + dir.file("y.pb"));
  ASSERT_EQ(r.status, 0) << r.out;
  const Tensor y = from_proto(read_tensor_file(dir.file("y.pb")), "y.pb");
  const ImportedModel m = import_model(load_model_file(dir.file("m.onnx")));
  const Tensor host = run_on_host(m, {Tensor{{2, 3}, true, {}, {4, 0, 2, 2, 1, 3}}})[0];
  EXPECT_EQ(y.shape, (graph::Shape{2, 3, 4}));
  EXPECT_EQ(y.f, host.f);  // rows copied and relu: exact on the chip
}

TEST_F(OnnxCli, InferWithAnIdOutsideTheTable_bad) {
  testing::TempDir dir;
  write_ids_model(dir, {4, 0, 5, 2, 1, 3});
  const testing::CliResult r = testing::run_cli(
      "infer --model " + dir.file("m.onnx") + " --input ids=" + dir.file("ids.pb"), true);
  EXPECT_EQ(r.status, 1 << 8);
  EXPECT_EQ(r.out, "tessera: error: embedding: id 5 at position 2 is outside [0, 5)\n");
}

TEST_F(OnnxCli, InferInputOfTheWrongType_bad) {
  testing::TempDir dir;
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(4);
  t.add_dims(64);
  for (int k = 0; k < 4 * 64; ++k) t.add_int64_data(k);
  write_tensor_file(dir.file("x.pb"), t);
  const testing::CliResult r =
      testing::run_cli("infer --model " + kMlp + " --input x=" + dir.file("x.pb"), true);
  EXPECT_EQ(r.status, 1 << 8);
  EXPECT_EQ(r.out,
            "tessera: error: " + dir.file("x.pb") + ": holds INT64; input 'x' takes FLOAT\n");
}

// A misspelt input name is named, even though the model's own input then has a symbolic dim
// nothing binds.
TEST_F(OnnxCli, InferInputTheModelDoesNotHave_bad) {
  const testing::CliResult r =
      testing::run_cli("infer --model " + kMlp + " --input y=" + std::string(TESSERA_SOURCE_DIR) +
                           "/data/onnx/mlp_x.pb",
                       true);
  EXPECT_EQ(r.status, 1 << 8);
  EXPECT_EQ(r.out, "tessera: error: " + kMlp +
                       ": 'y' (given with --input or --input-shape) is not a graph input; the "
                       "inputs: x\n");
}

TEST_F(OnnxCli, ImportOfANonOnnxFile_bad) {
  testing::TempDir dir;
  testing::write_bytes(dir.file("m.onnx"), "not a model");
  const testing::CliResult r = testing::run_cli("import " + dir.file("m.onnx"), true);
  EXPECT_EQ(r.status, 1 << 8);
  EXPECT_EQ(r.out, "tessera: error: " + dir.file("m.onnx") +
                       ": not an ONNX model (the bytes do not parse as an onnx.ModelProto)\n");
}

}  // namespace
}  // namespace tessera::onnx_import
