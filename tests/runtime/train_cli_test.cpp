// `tessera train` / `tessera compile` on bad input: one line on stderr, non-zero exit. Runs the
// built `tessera` executable (skipped when it has not been built in this build tree).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

namespace {

struct Result {
  int status = 0;
  std::string err;
};

std::string binary() { return std::string(TESSERA_BINARY_DIR) + "/src/cli/tessera"; }

Result run(const std::string& args) {
  const std::string cmd = binary() + " " + args + " 2>&1 >/dev/null";
  Result r;
  FILE* f = popen(cmd.c_str(), "r");
  char buf[512];
  while (f != nullptr && std::fgets(buf, sizeof buf, f) != nullptr) r.err += buf;
  r.status = f != nullptr ? pclose(f) : -1;
  return r;
}

class TrainCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(binary())) GTEST_SKIP() << "tessera not built";
  }
};

TEST_F(TrainCli, UnknownModel_bad) {
  const Result r = run("train --model nope --steps 1");
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.err.rfind("tessera: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("nope"), std::string::npos);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

TEST_F(TrainCli, UnknownDataset_bad) {
  const Result r = run("train --dataset cifar --steps 1");
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.err, "tessera: error: train: unknown dataset 'cifar' (known: fashion-mnist)\n");
}

TEST_F(TrainCli, MissingDataset_bad) {
  const Result r = run("train --data-dir /nonexistent/dir --steps 1");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("/nonexistent/dir"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

TEST_F(TrainCli, BadFlags_bad) {
  EXPECT_NE(run("train --epochs 0").status, 0);
  EXPECT_EQ(run("train --epochs 0").err, "tessera: error: train: --epochs must be >= 1\n");
  EXPECT_EQ(run("train --optimizer rmsprop --steps 1").status >> 8, 1);
  EXPECT_NE(run("train --batch abc").status, 0);
}

TEST_F(TrainCli, CompileBadEmit_bad) {
  const Result r = run("compile --emit pdf");
  EXPECT_EQ(r.err, "tessera: error: compile: --emit must be asm or stats, got 'pdf'\n");
}

TEST_F(TrainCli, CompileUnsupportedModel_bad) {
  const Result r = run("compile --model cnn_small --batch 8");
  EXPECT_EQ(r.err,
            "tessera: error: compiler: op 'conv2d' (node 'conv1.conv') is not supported by the tensor-core "
            "lowering yet\n");
}

}  // namespace
