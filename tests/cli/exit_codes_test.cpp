// The exit-code contract of the `tessera` command (docs/cli.md): 0 success; 1 bad input or a
// simulated fault; 2 bad command line (a flag the parser rejects or a flag value a command
// refuses); 3 internal error. Runs the built executable (skipped when it has not been built) and
// checks exit code and message of each bad command line.
#include <cstdio>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "support/cli_run.h"

namespace {

struct Result {
  int code = -1;    // the exit code
  std::string err;  // standard error
};

// `tessera ARGS` with standard output sent to `out`.
Result run(const std::string& args, const std::string& out = "/dev/null") {
  const std::string cmd = tessera::testing::cli_binary() + " " + args + " 2>&1 >" + out;
  Result r;
  FILE* f = popen(cmd.c_str(), "r");
  char buf[4096];
  while (f != nullptr && std::fgets(buf, sizeof buf, f) != nullptr) r.err += buf;
  const int status = f != nullptr ? pclose(f) : -1;
  r.code = status >= 0 ? status >> 8 : -1;
  return r;
}

bool have_fashion_mnist() {
  return std::filesystem::exists("/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz");
}

const std::string kSource = TESSERA_SOURCE_DIR;

class ExitCodes : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!tessera::testing::cli_binary_exists()) GTEST_SKIP() << "tessera not built";
  }
};

TEST_F(ExitCodes, FlagValuesRefusedByACommandExitTwoLikeParserErrors_bad) {
  Result r = run("bench mxu --reps 0");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "tessera: error: bench mxu: --reps must be positive\n");
  r = run("train --epochs 0");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "tessera: error: train: --epochs must be >= 1\n");
  r = run("train --bucket-words -1 --chips 2");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "tessera: error: train: --bucket-words -1: must be >= 0\n");
  r = run("train --optimizer rmsprop --steps 1");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "tessera: error: --optimizer: unknown optimizer 'rmsprop' (known: sgd, adam)\n");
  EXPECT_EQ(run("bench mxu --no-such-flag").code, 2);  // the parser's own
}

TEST_F(ExitCodes, BadInputExitsOne_bad) {
  const Result r = run("run /nonexistent/p.s");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("/nonexistent/p.s"), std::string::npos) << r.err;
}

TEST_F(ExitCodes, UnknownCommandIsNamedWithTheCommands_bad) {
  const Result r = run("foo");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("tessera: error: unknown command 'foo' (commands: asm, disasm, run,", 0),
            0u)
      << r.err;
}

TEST_F(ExitCodes, TrainStepsBelowOneIsRefused_bad) {
  for (const char* steps : {"0", "-3"}) {
    const Result r = run(std::string("train --steps ") + steps);
    EXPECT_EQ(r.code, 2) << steps;
    EXPECT_EQ(r.err, "tessera: error: train: --steps must be >= 1\n") << steps;
  }
}

TEST_F(ExitCodes, NegativeOrZeroIntegerFlagsAreNamed_bad) {
  Result r = run("train --seed -1");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--seed: must be a non-negative integer, got '-1'"), std::string::npos)
      << r.err;
  r = run("bench fabric --bytes -5");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--bytes: must be a non-negative integer, got '-5'"), std::string::npos)
      << r.err;
  r = run("run " + kSource + "/examples/matmul.s --max-bundles 0");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--max-bundles: must be a positive integer, got '0'"), std::string::npos)
      << r.err;
}

TEST_F(ExitCodes, FailedWriteToStandardOutputExitsOne_bad) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const Result r = run("bench mxu --m 128 --k 128 --n 128 --json", "/dev/full");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "tessera: error: writing standard output: No space left on device\n");
}

TEST_F(ExitCodes, FailedWriteOfAnOutputFileExitsOne_bad) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const std::string graph = "map --graph " + kSource + "/data/mapper/dag48.json --mesh 8x8 ";
  Result r = run(graph + "--out /dev/full");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "tessera: error: /dev/full: cannot write file: No space left on device\n");
  r = run(graph + "--svg /dev/full");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "tessera: error: /dev/full: cannot write file: No space left on device\n");
}

TEST_F(ExitCodes, TrainTakesAJsonModel) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  const Result r = run("train --model " + kSource + "/data/graph/mlp.json --steps 2");
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST_F(ExitCodes, TrainNamesABadJsonModel_bad) {
  const std::string path = kSource + "/data/graph/bad_missing_flatten.json";
  const Result r = run("train --model " + path + " --steps 1");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "tessera: error: model 'no_flatten': layer 1 (dense): needs a flat input [batch, "
            "features], got [128, 28, 28, 4] (add a flatten layer)\n");
}

TEST_F(ExitCodes, AnUnwritableReportFailsBeforeTraining_bad) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  const Result r = run("train --steps 1 --report /nonexistent/r.json");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err,
            "tessera: error: /nonexistent/r.json: cannot open report for writing: No such file or "
            "directory\n");
}

// `tessera ARGS` ends with exit code `code` and the one error line `message`.
void expect_error(const std::string& args, int code, const std::string& message) {
  const Result r = run(args);
  EXPECT_EQ(r.code, code) << args;
  EXPECT_EQ(r.err, "tessera: error: " + message + "\n") << args;
}

TEST_F(ExitCodes, FlagValuesCheckedByLibrariesAreUsageErrorsNamingTheFlag_bad) {
  const std::string zoo = "--model: unknown model 'foo' (known: mlp, cnn, cnn_small)";
  expect_error("train --model foo --steps 1", 2, zoo);
  expect_error("compile --model foo", 2, zoo);
  expect_error("bench train --model foo", 2, zoo);
  expect_error("train --chips 0 --steps 1", 2, "train: --chips 0: need at least 1");
  expect_error("train --chips 2 --allreduce tree --steps 1", 2,
               "--allreduce: 'tree': expected auto, ring or torus");
  expect_error("train --host-gbps 0 --steps 1", 2, "train: --host-gbps must be positive");
  expect_error("map --family foo --mesh 4x4", 2,
               "family: unknown graph family 'foo' (mlp, conv, tiles, dag, planted, random)");
  expect_error("map --from-model foo --mesh 4x4", 2,
               "--from-model: unknown model 'foo' (mlp, cnn)");
  expect_error("map --family dag --mesh 4x4 --method foo", 2, "--method: unknown method 'foo'");
  expect_error("map train --suites S,X --iterations 0 --out /dev/null", 2,
               "--suites: unknown suite 'X' (S, M, L)");
  expect_error("map train --decode greedy --iterations 0 --out /dev/null", 2,
               "--decode: unknown decoding 'greedy' (one-shot, sequential)");
}

TEST_F(ExitCodes, TrainingLoopFlagsAreUsageErrors_bad) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  expect_error("train --checkpoint-keep 0 --steps 1", 2, "train: --checkpoint-keep must be >= 1");
  expect_error("train --checkpoint-every 5 --steps 1", 2,
               "train: --checkpoint-every needs --checkpoint-dir");
}

TEST_F(ExitCodes, NumbersInListsAndPairsAreCheckedNotConverted_bad) {
  expect_error("map train --sizes 64,abc --iterations 1 --out /dev/null", 2,
               "--sizes: 'abc' is not a positive node count");
  expect_error("map train --sizes 99999999999 --iterations 1 --out /dev/null", 2,
               "--sizes: '99999999999' is not a positive node count");
  const Result r = run("map --family dag --nodes 0 --mesh 4x4");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--nodes: must be a positive integer, got '0'"), std::string::npos) << r.err;
  const std::string big = "9223372036854775807:9223372036854775807";
  expect_error("run " + kSource + "/examples/matmul.s --dump-vmem " + big, 2,
               "--dump-vmem " + big + ": rows outside vector memory (0..32767)");
}

TEST_F(ExitCodes, AMatmulTooLargeForTheSimulatedMemoryAllocatesNothing_bad) {
  expect_error("bench mxu --m 100000 --k 100000 --n 100000", 1, "gemm: HBM cannot hold A, B and C");
}

TEST_F(ExitCodes, AnUnwritableTraceFailsBeforeTheRun_bad) {
  expect_error(
      "run " + kSource + "/examples/matmul.s --trace /nonexistent/t.json", 1,
      "/nonexistent/t.json: cannot open trace file for writing: No such file or directory");
}

TEST_F(ExitCodes, VectorMemoryBeyondAWordAddressIsRefusedAtConfigRead_bad) {
  expect_error("train --steps 1 --set core.vector.vmem_bytes=17179869184", 1,
               "<built-in defaults> + overrides: key 'core.vector.vmem_bytes': value 17179869184 "
               "is out of range [1024, 8589934592] (bytes)");
}

TEST_F(ExitCodes, AnOverflowingNumberInSetIsAUsageError_bad) {
  expect_error("train --steps 1 --set core.clock_hz=1e400", 2,
               "--set: core.clock_hz: the number 1e400 is out of range");
}

TEST_F(ExitCodes, ACheckpointDirectoryThatIsAFileFailsBeforeTraining_bad) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  const std::string file = kSource + "/README.md";
  expect_error("train --steps 1 --checkpoint-dir " + file, 1,
               file + ": is a file, not a checkpoint directory");
}

}  // namespace
