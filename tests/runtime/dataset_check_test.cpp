// A dataset is checked against the model's input before anything runs: the file, the shape found
// and the shape expected are named.
#include <filesystem>

#include <gtest/gtest.h>

#include "chip_test_data.h"
#include "runtime/dataset.h"
#include "runtime/idx.h"
#include "runtime/training_run.h"
#include "support/error_of.h"
#include "support/temp_dir.h"

namespace tessera::runtime {
namespace {

using tessera::testing::error_of;
using tessera::testing::TempDir;

// n images of rows x cols (all pixels 7) with labels i % 10, written as IDX files under `dir`
// with the Fashion-MNIST names of `split` ("train" or "t10k").
void write_split(const std::string& dir, const std::string& split, int n, int rows, int cols) {
  std::vector<uint8_t> labels;
  for (int i = 0; i < n; ++i) labels.push_back(static_cast<uint8_t>(i % 10));
  write_idx(dir + "/" + split + "-images-idx3-ubyte", {n, rows, cols},
            std::vector<uint8_t>(static_cast<size_t>(n) * rows * cols, 7), false);
  write_idx(dir + "/" + split + "-labels-idx1-ubyte", {n}, labels, false);
}

Dataset images_of(const TempDir& dir, int rows, int cols) {
  write_split(dir.str(), "train", 4, rows, cols);
  return load_fashion_mnist(dir.str(), Split::kTrain);
}

TEST(DatasetShape, ImagesOfTheModelsInputFit) {
  TempDir dir;
  const Dataset d = images_of(dir, 28, 28);
  EXPECT_EQ(error_of([&] { check_fits_model(d, graph::zoo_spec("mlp")); }), "(no error)");
  EXPECT_EQ(error_of([&] { check_fits_model(d, graph::zoo_spec("cnn_small")); }), "(no error)");
}

TEST(DatasetShape, FlatInputOfAnotherSizeIsRefused_bad) {
  TempDir dir;
  const Dataset d = images_of(dir, 27, 29);
  EXPECT_EQ(error_of([&] { check_fits_model(d, graph::zoo_spec("mlp")); }),
            dir.file("train-images-idx3-ubyte") +
                ": images are 27x29 (783 values per sample), but model 'mlp' takes input [784]");
}

TEST(DatasetShape, ImageInputOfTheSameSizeButAnotherShapeIsRefused_bad) {
  TempDir dir;
  const Dataset d = images_of(dir, 14, 56);
  EXPECT_EQ(error_of([&] { check_fits_model(d, graph::zoo_spec("cnn_small")); }),
            dir.file("train-images-idx3-ubyte") +
                ": images are 14x56 (784 values per sample), but model 'cnn_small' takes input "
                "[28, 28, 1]");
  EXPECT_EQ(error_of([&] { check_fits_model(d, graph::zoo_spec("mlp")); }), "(no error)");
}

TEST(DatasetShape, DatasetBuiltInMemoryIsNamedByItsName_bad) {
  Dataset d = chip_test::synthetic_dataset("synthetic", 2, 1);
  d.rows = 27;
  d.cols = 29;
  EXPECT_EQ(error_of([&] { check_fits_model(d, graph::zoo_spec("mlp")); }),
            "dataset 'synthetic': images are 27x29 (783 values per sample), but model 'mlp' takes "
            "input [784]");
}

TEST(DatasetShape, TrainingRunRefusesAMismatchBeforeTraining_bad) {
  TempDir dir;
  write_split(dir.str(), "train", 4, 27, 29);
  write_split(dir.str(), "t10k", 4, 27, 29);
  const Dataset train = load_fashion_mnist(dir.str(), Split::kTrain);
  const Dataset test = load_fashion_mnist(dir.str(), Split::kTest);
  TrainingRunOptions o;
  o.model_name = "mlp";
  o.model = graph::zoo_spec("mlp");
  o.config = load_run_config("");
  EXPECT_EQ(error_of([&] { TrainingRun run(train, test, o); }),
            dir.file("train-images-idx3-ubyte") +
                ": images are 27x29 (783 values per sample), but model 'mlp' takes input [784]");
}

TEST(IdxLimits, DirectoryIsNamed_bad) {
  TempDir dir;
  EXPECT_EQ(error_of([&] { read_idx(dir.str()); }), dir.str() + ": is a directory, not a file");
}

TEST(IdxLimits, HeaderClaimingMoreThanTheFileHoldsAllocatesNothing_bad) {
  TempDir dir;
  // 65536 x 65536 = 2^32 bytes claimed, 3 present.
  testing::write_bytes(dir.file("big"), std::string("\0\0\x08\x02\0\x01\0\0\0\x01\0\0abc", 15));
  EXPECT_EQ(error_of([&] { read_idx(dir.file("big")); }),
            dir.file("big") + ": truncated data: expected 4294967296 data bytes, found 3");
}

}  // namespace
}  // namespace tessera::runtime
