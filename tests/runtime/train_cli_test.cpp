// `tessera train` / `tessera compile` on bad input: one line on stderr, non-zero exit; and short
// runs (gpt on a small corpus written under the build tree, resume). Runs the built `tessera`
// executable (skipped when it has not been built in this build tree).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "runtime/idx.h"
#include "support/cli_run.h"

namespace {

struct Result {
  int status = 0;
  std::string err;
};

// stderr of `tessera args` (stdout dropped).
Result run(const std::string& args) {
  tessera::testing::CliResult r = tessera::testing::run_cli(args, /*keep_stderr=*/true);
  return {r.status, std::move(r.out)};
}

class TrainCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!tessera::testing::cli_binary_exists()) GTEST_SKIP() << "tessera not built";
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
  EXPECT_EQ(r.err,
            "tessera: error: train: unknown dataset 'cifar' (known: fashion-mnist, fortunes, "
            "synthetic)\n");
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
  EXPECT_EQ(run("train --optimizer rmsprop --steps 1").status >> 8, 2);
  EXPECT_NE(run("train --batch abc").status, 0);
  EXPECT_EQ(run("train --optimizer adam --adam-on foo --steps 1").err,
            "tessera: error: train: unknown --adam-on 'foo' (known: unit, vector-unit)\n");
}

TEST_F(TrainCli, BadEmbeddingOn_bad) {
  const std::pair<const char*, const char*> cases[] = {
      {"--model gpt --embedding-on gpu",
       "--embedding-on: unknown 'gpu' (known: tensor-core, "
       "sparse-core)"},
      {"--embedding-on sparse-core", "--embedding-on: sparse-core is for --model gpt"},
      {"--model gpt --embedding-on sparse-core --chips 2",
       "--embedding-on: sparse-core trains on one chip: not with --chips"},
  };
  for (const auto& [flags, want] : cases) {
    const Result r = run(std::string("train --steps 1 ") + flags);
    EXPECT_EQ(r.status >> 8, 2) << flags;
    EXPECT_EQ(r.err.rfind("tessera: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(want), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST_F(TrainCli, CompileBadEmit_bad) {
  const Result r = run("compile --emit pdf");
  EXPECT_EQ(r.err, "tessera: error: compile: --emit must be asm or stats, got 'pdf'\n");
}

// A scratch directory under the build tree, emptied first.
std::string scratch(const std::string& name) {
  const std::string d = std::string(TESSERA_BINARY_DIR) + "/test-scratch/" + name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

TEST_F(TrainCli, CorruptIdx_bad) {
  const std::string d = scratch("corrupt-idx");
  for (const char* f : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                        "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"})
    std::ofstream(d + "/" + f, std::ios::binary) << "\x08\x08\x08\x03 not an idx file";
  const Result r = run("train --steps 1 --data-dir " + d);
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.err, "tessera: error: " + d +
                       "/train-images-idx3-ubyte: bad magic: first two bytes must be 0, got 8 8 "
                       "(not an IDX file)\n");
}

// n images of rows x cols and their labels under `dir`, with the Fashion-MNIST names of `split`.
void write_split(const std::string& dir, const std::string& split, int n, int rows, int cols) {
  std::vector<uint8_t> labels;
  for (int i = 0; i < n; ++i) labels.push_back(static_cast<uint8_t>(i % 10));
  tessera::runtime::write_idx(dir + "/" + split + "-images-idx3-ubyte", {n, rows, cols},
                              std::vector<uint8_t>(static_cast<size_t>(n) * rows * cols, 9), false);
  tessera::runtime::write_idx(dir + "/" + split + "-labels-idx1-ubyte", {n}, labels, false);
}

TEST_F(TrainCli, DatasetOfAnotherShapeThanTheModelsInput_bad) {
  const std::string d = scratch("wrong-shape");
  write_split(d, "train", 8, 27, 29);
  write_split(d, "t10k", 8, 27, 29);
  Result r = run("train --steps 1 --batch 4 --data-dir " + d);
  EXPECT_EQ(r.status >> 8, 1);
  EXPECT_EQ(r.err, "tessera: error: " + d +
                       "/train-images-idx3-ubyte: images are 27x29 (783 values per sample), but "
                       "model 'mlp' takes input [784]\n");
  const std::string e = scratch("wrong-shape-cnn");
  write_split(e, "train", 8, 14, 56);
  write_split(e, "t10k", 8, 14, 56);
  r = run("train --model cnn_small --steps 1 --batch 4 --data-dir " + e);
  EXPECT_EQ(r.status >> 8, 1);
  EXPECT_EQ(r.err, "tessera: error: " + e +
                       "/train-images-idx3-ubyte: images are 14x56 (784 values per sample), but "
                       "model 'cnn_small' takes input [28, 28, 1]\n");
}

bool have_fashion_mnist() {
  return std::filesystem::exists("/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz");
}

// `compile --model` takes the models `train` does, with their size flags: the statistics of the
// program `train` runs (its bundles), the ResNets for either input, the transformers; --set
// reaches the core it compiles for.
TEST_F(TrainCli, CompileTakesTheZoosResNetsAndTransformers) {
  const auto stats = [](const std::string& flags) {
    const tessera::testing::CliResult r = tessera::testing::run_cli("compile " + flags);
    EXPECT_EQ(r.status, 0) << flags;
    return nlohmann::json::parse(r.out.empty() ? "{}" : r.out);
  };
  const nlohmann::json fashion = stats("--model resnet18 --width 4 --batch 4");
  const nlohmann::json synthetic =
      stats("--model resnet18 --width 4 --batch 4 --dataset synthetic --image 32");
  ASSERT_TRUE(fashion.contains("mxu_macs") && synthetic.contains("mxu_macs"));
  // Three input channels and 1000 classes instead of one and 10: more MACs, as many GEMMs.
  EXPECT_GT(synthetic["mxu_macs"].get<int64_t>(), fashion["mxu_macs"].get<int64_t>());
  EXPECT_EQ(synthetic["gemms"], fashion["gemms"]);
  const nlohmann::json bert =
      stats("--model bert --layers 1 --d-model 64 --heads 2 --context 16 --batch 2");
  const nlohmann::json bert2 =
      stats("--model bert --layers 2 --d-model 64 --heads 2 --context 16 --batch 2");
  ASSERT_TRUE(bert.contains("gemms") && bert2.contains("gemms"));
  EXPECT_GT(bert2["gemms"].get<int>(), bert["gemms"].get<int>());
  EXPECT_GT(stats("--model gpt --batch 4").value("bundles", 0), 0);
  if (have_fashion_mnist()) {
    const std::string report = scratch("compile-vs-train") + "/r.json";
    EXPECT_EQ(
        run("train --model resnet18 --width 4 --batch 4 --steps 1 --epochs 1 --report " + report)
            .status,
        0);
    std::ifstream in(report);
    EXPECT_EQ(nlohmann::json::parse(in)["epochs"][0]["program_bundles"], fashion["bundles"]);
  }
  EXPECT_EQ(run("compile --model mlp --dataset synthetic").err,
            "tessera: error: --dataset: synthetic sets the input of --model resnet18|resnet50\n");
  EXPECT_EQ(run("compile --model mlp --set core.scalar.imem_bundles=1024").err,
            "tessera: error: compiler: the program needs 2317 bundles; instruction memory holds "
            "1024\n");
  EXPECT_EQ(run("compile --model cnn --heads 2").err,
            "tessera: error: --heads: sets a size of --model gpt|bert, not of 'cnn'\n");
}

TEST_F(TrainCli, ModelTooBigForTheConfig_bad) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  const Result r = run("train --steps 1 --batch 8 --config " + std::string(TESSERA_SOURCE_DIR) +
                       "/configs/small.json");
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.err,
            "tessera: error: compiler: parameters and optimizer state need 3788560 bytes of HBM, "
            "the core has 1048576\n");
}

TEST_F(TrainCli, ProgramLongerThanTheInstructionMemory_bad) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  const Result r = run("train --steps 1 --batch 128 --set core.scalar.imem_bundles=1024");
  EXPECT_EQ(r.status >> 8, 1);
  EXPECT_EQ(
      r.err,
      "tessera: error: compiler: the program needs 2317 bundles; instruction memory holds 1024\n");
}

TEST_F(TrainCli, ResNetSizeFlags_bad) {
  const std::pair<const char*, const char*> cases[] = {
      {"--model resnet18 --width 0", "--width: 0: must be >= 1"},
      {"--model resnet50 --image 16", "--image: 16: must be >= 32 (the five stride-2 steps)"},
      {"--model mlp --width 8", "--width: sets a size of --model resnet18|resnet50, not of 'mlp'"},
      {"--model gpt --image 64", "--image: sets a size of --model resnet18|resnet50, not of 'gpt'"},
  };
  for (const auto& [flags, want] : cases) {
    const Result r = run(std::string("train --steps 1 ") + flags);
    EXPECT_EQ(r.status >> 8, 2) << flags;
    EXPECT_EQ(r.err, std::string("tessera: error: ") + want + "\n") << flags;
  }
}

// The loss of the epoch line of `train_args` on configs/tpu-v3-like.json; fails the test (NaN)
// unless the run succeeds.
double first_epoch_loss(const std::string& train_args) {
  const tessera::testing::CliResult r = tessera::testing::run_cli(
      train_args + " --config " + std::string(TESSERA_SOURCE_DIR) + "/configs/tpu-v3-like.json");
  EXPECT_EQ(r.status, 0) << train_args;
  const size_t at = r.out.find("epoch 1: loss ");
  if (at == std::string::npos) {
    ADD_FAILURE() << train_args << ": no epoch line in\n" << r.out;
    return std::nan("");
  }
  return std::stod(r.out.substr(at + 14, 8));
}

// Synthetic images: a ResNet at torchvision's input shape (3 channels, 1000 classes) trains a
// step and evaluates; other models are refused.
TEST_F(TrainCli, ResNetOnSyntheticImages) {
  EXPECT_NEAR(first_epoch_loss("train --model resnet18 --dataset synthetic --width 4 --image 32 "
                               "--batch 2 --steps 1 --epochs 1 --optimizer sgd --lr 0.05"),
              std::log(1000.0), 2.0);
  const Result cnn = run("train --model cnn --dataset synthetic --steps 1");
  EXPECT_EQ(cnn.status >> 8, 2);
  EXPECT_EQ(cnn.err,
            "tessera: error: --dataset: synthetic data trains --model resnet18|resnet50|bert, not "
            "'cnn'\n");
}

// BERT on random bytes (its default dataset): a tiny encoder trains a step; the loss starts near
// ln 30522 (BERT's vocabulary). Images and a size that does not divide are refused.
TEST_F(TrainCli, BertOnSyntheticTokens) {
  EXPECT_NEAR(first_epoch_loss("train --model bert --layers 1 --d-model 32 --heads 2 --context 16 "
                               "--batch 2 --steps 1"),
              std::log(30522.0), 0.5);
  Result bad = run("train --model bert --dataset fashion-mnist --steps 1");
  EXPECT_EQ(bad.status >> 8, 2);
  EXPECT_EQ(bad.err,
            "tessera: error: --dataset: 'fashion-mnist' holds images; --model bert trains on text "
            "(synthetic, fortunes)\n");
  bad = run("train --model bert --heads 5 --steps 1");
  EXPECT_EQ(bad.err, "tessera: error: --heads: 5 heads do not divide --d-model 768\n");
}

TEST_F(TrainCli, CheckpointFlags_bad) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  EXPECT_EQ(run("train --steps 1 --resume").err,
            "tessera: error: train: --resume needs --checkpoint-dir\n");
  EXPECT_EQ(run("train --steps 1 --checkpoint-every 5").err,
            "tessera: error: train: --checkpoint-every needs --checkpoint-dir\n");
  const std::string d = scratch("empty-ckpt");
  const Result r = run("train --steps 1 --resume --checkpoint-dir " + d);
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.err, "tessera: error: " + d +
                       ": no checkpoint to resume from (looked for ckpt-<step>.tsck)\n");
}

nlohmann::json epochs_without_wall_time(const std::string& report) {
  nlohmann::json j = nlohmann::json::parse(std::ifstream(report));
  for (auto& e : j["epochs"]) e.erase("host_seconds");
  return j["epochs"];
}

// Determinism across hosts: every vector path gives the same training, step for step. Two steps of
// mlp training with each PE, at each --vector-isa cap (the widest the host has, AVX2, the portable
// loops), write the same report but for host times.
TEST_F(TrainCli, EveryVectorIsaTrainsTheSame) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  const std::string d = scratch("vector-isa");
  for (const std::string pe : {"bit-parallel", "term-serial"}) {
    nlohmann::json first;
    for (const std::string isa : {"auto", "avx2", "portable"}) {
      const std::string report = d + "/" + pe + "-" + isa + ".json";
      const Result r = run("--vector-isa " + isa +
                           " train --epochs 1 --steps 2 --batch 8 --optimizer adam --seed 5 --pe " +
                           pe + " --report " + report);
      ASSERT_EQ(r.status, 0) << r.err;
      const nlohmann::json epochs = epochs_without_wall_time(report);
      ASSERT_EQ(epochs.size(), 1u);
      if (first.is_null()) first = epochs;
      EXPECT_EQ(epochs, first) << pe << " at --vector-isa " << isa;
    }
  }
}

TEST_F(TrainCli, ResumedRunReportsWhatAnUninterruptedRunReports) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  const std::string d = scratch("resume");
  const std::string common = "train --steps 2 --batch 8 --optimizer adam --seed 3 ";
  ASSERT_EQ(run(common + "--epochs 2 --report " + d + "/full.json").status, 0);
  ASSERT_EQ(run(common + "--epochs 1 --checkpoint-dir " + d + "/ck").status, 0);
  const Result r = run(common + "--epochs 2 --resume --checkpoint-dir " + d + "/ck --report " + d +
                       "/resumed.json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("resumed from " + d + "/ck/ckpt-0000000002.tsck"), std::string::npos)
      << r.err;
  const nlohmann::json full = epochs_without_wall_time(d + "/full.json");
  ASSERT_EQ(full.size(), 2u);
  EXPECT_EQ(epochs_without_wall_time(d + "/resumed.json"), full);
  const nlohmann::json rep = nlohmann::json::parse(std::ifstream(d + "/full.json"));
  EXPECT_TRUE(rep["resolved_config"].contains("core.clock_hz"));
  EXPECT_EQ(rep["epochs"][1]["steps"], 2);
  // Per step: the loss (equal batches: their mean is the epoch's) and the simulated cycles (their
  // sum is the epoch's).
  for (const auto& e : rep["epochs"]) {
    const auto &loss = e["per_step"]["loss"], &cycles = e["per_step"]["cycles"];
    ASSERT_EQ(loss.size(), 2u);
    ASSERT_EQ(cycles.size(), 2u);
    EXPECT_NEAR((loss[0].get<double>() + loss[1].get<double>()) / 2, e["loss"].get<double>(), 1e-6);
    EXPECT_EQ(cycles[0].get<int64_t>() + cycles[1].get<int64_t>(), e["sim_cycles"].get<int64_t>());
  }
}

// A corpus directory of one topic file: 1,000 fortunes of about 60 bytes (the validation stream,
// every tenth, holds 256 windows of 16 bytes).
const std::string& corpus() {
  static const std::string dir = [] {
    const std::string d = scratch("gpt-corpus");
    std::ofstream f(d + "/topic", std::ios::binary);
    for (int i = 0; i < 1000; ++i)
      f << "Fortune " << i << ": the quick brown fox jumps over the lazy dog.\n%\n";
    return d;
  }();
  return dir;
}

const std::string kTiny = "train --model gpt --d-model 32 --heads 2 --layers 1 --context 16 ";

TEST_F(TrainCli, GptShortRunReportsValidationLossTokensAndTheMxuSplit) {
  const std::string d = scratch("gpt-run");
  const Result r =
      run(kTiny + "--batch 4 --steps 3 --data-dir " + corpus() + " --report " + d + "/r.json");
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(d + "/r.json"));
  EXPECT_EQ(j["model"], "gpt");
  EXPECT_EQ(j["dataset"], "fortunes/train");
  const nlohmann::json& e = j["epochs"][0];
  EXPECT_EQ(e["steps"], 3);
  EXPECT_EQ(e["per_step"]["loss"].size(), 3u);
  // 3 steps from nearly uniform predictions (log 256 nats per byte): a little lower.
  EXPECT_LT(e["test_loss"].get<double>(), std::log(256.0));
  EXPECT_GT(e["test_loss"].get<double>(), std::log(256.0) - 0.5);
  EXPECT_GT(e["tokens_per_sim_second"].get<double>(), 0);
  EXPECT_GT(e["mxu_split"]["attention"]["utilization"].get<double>(), 0);
  EXPECT_GT(e["mxu_split"]["dense"]["utilization"].get<double>(), 0);
  // The step's program size: within the default instruction memory, and a run whose instruction
  // memory holds exactly that many bundles compiles the same program.
  const int64_t bundles = e["program_bundles"].get<int64_t>();
  EXPECT_GT(bundles, 0);
  EXPECT_LE(bundles, 65536);
  const Result exact = run(kTiny + "--batch 4 --steps 1 --data-dir " + corpus() +
                           " --set core.scalar.imem_bundles=" + std::to_string(bundles) +
                           " --report " + d + "/x.json");
  ASSERT_EQ(exact.status, 0) << exact.err;
  const nlohmann::json xj = nlohmann::json::parse(std::ifstream(d + "/x.json"));
  EXPECT_EQ(xj["epochs"][0]["program_bundles"], bundles);

  // The same run on the host reference executor in fp32: close losses.
  const Result h = run(kTiny + "--batch 4 --steps 3 --executor host-f32 --data-dir " + corpus() +
                       " --report " + d + "/h.json");
  ASSERT_EQ(h.status, 0) << h.err;
  const nlohmann::json hj = nlohmann::json::parse(std::ifstream(d + "/h.json"));
  EXPECT_NEAR(hj["epochs"][0]["test_loss"].get<double>(), e["test_loss"].get<double>(), 0.01);
}

TEST_F(TrainCli, GptOnChipsSplitsTheWindowsOverTheProcessors) {
  const std::string d = scratch("gpt-chips");
  const Result r = run(kTiny + "--batch 8 --steps 2 --chips 2 --cores-per-chip 2 --data-dir " +
                       corpus() + " --report " + d + "/r.json");
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(d + "/r.json"));
  EXPECT_EQ(j["model"], "gpt");
  EXPECT_EQ(j["processors"], 4);
  const nlohmann::json& e = j["epochs"][0];
  EXPECT_EQ(e["samples"], 16);
  EXPECT_EQ(e["per_step"]["loss"].size(), 2u);
  EXPECT_LT(e["test_loss"].get<double>(), std::log(256.0));
  EXPECT_DOUBLE_EQ(e["tokens_per_sim_second"].get<double>(),
                   e["samples_per_sim_second"].get<double>() * 16);
  EXPECT_GT(e["exchange_bytes"].get<uint64_t>(), 0u);
  EXPECT_GT(e["mxu_split"]["attention"]["utilization"].get<double>(), 0);
}

// BERT data-parallel: the windows split over the processors of a board, the all-reduce's bytes
// in the report; the first step's loss (the same weights, the same windows) equals one chip's.
TEST_F(TrainCli, BertOnChipsSplitsTheWindowsOverTheProcessors) {
  const std::string d = scratch("bert-chips");
  const std::string bert =
      "train --model bert --layers 1 --d-model 32 --heads 2 --context 16 --batch 8 --steps 2 "
      "--config " +
      std::string(TESSERA_SOURCE_DIR) + "/configs/board4.json --report " + d;
  ASSERT_EQ(run(bert + "/one.json").status, 0);
  const Result r = run(bert + "/dp.json --chips 4");
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json one = nlohmann::json::parse(std::ifstream(d + "/one.json"));
  const nlohmann::json dp = nlohmann::json::parse(std::ifstream(d + "/dp.json"));
  EXPECT_EQ(dp["model"], "bert");
  EXPECT_EQ(dp["processors"], 8);
  const nlohmann::json& e = dp["epochs"][0];
  EXPECT_EQ(e["samples"], 16);
  EXPECT_GT(e["exchange_bytes"].get<uint64_t>(), 0u);
  EXPECT_NEAR(e["per_step"]["loss"][0].get<double>(),
              one["epochs"][0]["per_step"]["loss"][0].get<double>(), 1e-5);
}

TEST_F(TrainCli, GptOnMoreProcessorsThanWindows_bad) {
  const Result r =
      run(kTiny + "--batch 3 --steps 1 --chips 2 --cores-per-chip 2 --data-dir " + corpus());
  EXPECT_EQ(r.status >> 8, 2);
  EXPECT_EQ(r.err,
            "tessera: error: train: batch 3 has fewer samples than the 4 processors (2 chips x 2 "
            "cores)\n");
}

TEST_F(TrainCli, GptSizes_bad) {
  Result r = run("train --model gpt --heads 3 --steps 1");
  EXPECT_EQ(r.status >> 8, 2);
  EXPECT_EQ(r.err, "tessera: error: --heads: 3 heads do not divide --d-model 128\n");
  r = run("train --model gpt --context 0 --steps 1");
  EXPECT_EQ(r.err, "tessera: error: --context: 0: must be >= 1\n");
  r = run("train --model mlp --context 16 --steps 1");
  EXPECT_EQ(r.status >> 8, 2);
  EXPECT_EQ(r.err, "tessera: error: --context: sets a size of --model gpt|bert, not of 'mlp'\n");
}

TEST_F(TrainCli, GptDatasetOfTheOtherKind_bad) {
  Result r = run("train --model mlp --dataset fortunes --steps 1");
  EXPECT_EQ(r.status >> 8, 2);
  EXPECT_EQ(r.err,
            "tessera: error: --dataset: fortunes is text; it trains --model gpt|bert, not 'mlp'\n");
  r = run("train --model gpt --dataset fashion-mnist --steps 1");
  EXPECT_EQ(r.status >> 8, 2);
  EXPECT_EQ(r.err,
            "tessera: error: --dataset: 'fashion-mnist' holds images; --model gpt trains on text "
            "(fortunes)\n");
}

TEST_F(TrainCli, GptContextLongerThanTheValidationStreamHolds_bad) {
  const Result r =
      run("train --model gpt --d-model 32 --heads 2 --layers 1 --context 4096 "
          "--batch 1 --steps 1 --data-dir " +
          corpus());
  EXPECT_NE(r.status, 0);
  EXPECT_EQ(r.err.rfind("tessera: error: --context: 4096", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

TEST_F(TrainCli, GptStepThatDoesNotFitTheChipNamesContext_bad) {
  // 512 windows of 16 bytes a step need more HBM than the small config's core has.
  const Result r =
      run("train --model gpt --d-model 32 --heads 2 --layers 1 --context 16 --batch 512 "
          "--steps 1 --config " +
          std::string(TESSERA_SOURCE_DIR) + "/configs/small.json --data-dir " + corpus());
  EXPECT_EQ(r.status >> 8, 2);
  EXPECT_EQ(r.err.rfind("tessera: error: --context: 16: the gpt step (d-model 32, batch 512) does "
                        "not fit the chip; a shorter --context or a smaller --batch or --d-model "
                        "would (compiler: ",
                        0),
            0u)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

TEST_F(TrainCli, GptCheckpointOfAnotherModel_bad) {
  const std::string d = scratch("gpt-ckpt");
  ASSERT_EQ(
      run(kTiny + "--batch 4 --steps 1 --data-dir " + corpus() + " --checkpoint-dir " + d).status,
      0);
  const Result r =
      run("train --model gpt --d-model 64 --heads 2 --layers 1 --context 16 --batch 4 "
          "--steps 1 --resume --data-dir " +
          corpus() + " --checkpoint-dir " + d);
  EXPECT_EQ(r.status >> 8, 1);
  EXPECT_EQ(r.err, "tessera: error: " + d +
                       "/ckpt-0000000001.tsck: checkpoint is for gpt "
                       "{\"d_model\":32,\"heads\":2,\"layers\":1,\"context\":16}, this run has gpt "
                       "{\"d_model\":64,\"heads\":2,\"layers\":1,\"context\":16}\n");
}

}  // namespace
