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

// Images of several channels fit an input [h, w, c] with the same c, and a flat input of their
// size; the error names the channels.
TEST(DatasetShape, ChannelsOfTheImagesMustBeTheModels_bad) {
  const Dataset rgb = synthetic_images("rgb", 2, 28, 3, 10, 1);
  graph::ModelSpec three = graph::zoo_spec("cnn_small");
  three.input = {28, 28, 3};
  EXPECT_EQ(error_of([&] { check_fits_model(rgb, three); }), "(no error)");
  graph::ModelSpec flat = graph::zoo_spec("mlp");
  flat.input = {28 * 28 * 3};
  EXPECT_EQ(error_of([&] { check_fits_model(rgb, flat); }), "(no error)");
  EXPECT_EQ(error_of([&] { check_fits_model(rgb, graph::zoo_spec("cnn_small")); }),
            "dataset 'rgb': images are 28x28x3 (2352 values per sample), but model 'cnn_small' "
            "takes input [28, 28, 1]");
  const Dataset grey = synthetic_images("grey", 2, 28, 1, 10, 1);
  EXPECT_EQ(error_of([&] { check_fits_model(grey, three); }),
            "dataset 'grey': images are 28x28 (784 values per sample), but model 'cnn_small' "
            "takes input [28, 28, 3]");
}

// Synthetic images: the seed's values, every one in [0, 1), labels in range, another seed other
// values; a size below 1 is refused.
TEST(SyntheticImages, SeededUniformImagesAndLabelsInRange) {
  const Dataset a = synthetic_images("a", 5, 7, 3, 1000, 42);
  EXPECT_EQ(a.count, 5);
  EXPECT_EQ(a.sample_size(), 7 * 7 * 3);
  ASSERT_EQ(a.images.size(), 5u * 147);
  ASSERT_EQ(a.labels.size(), 5u);
  EXPECT_EQ(a.images, synthetic_images("a", 5, 7, 3, 1000, 42).images);
  EXPECT_EQ(a.labels, synthetic_images("a", 5, 7, 3, 1000, 42).labels);
  EXPECT_NE(a.images, synthetic_images("a", 5, 7, 3, 1000, 43).images);
  double sum = 0;
  for (float x : a.images) {
    EXPECT_GE(x, 0.0f);
    EXPECT_LT(x, 1.0f);
    sum += x;
  }
  EXPECT_NEAR(sum / static_cast<double>(a.images.size()), 0.5, 0.05);
  for (int32_t y : a.labels) {
    EXPECT_GE(y, 0);
    EXPECT_LT(y, 1000);
  }
  std::vector<float> sample(static_cast<size_t>(a.sample_size()));
  a.copy_image(4, sample.data());
  EXPECT_EQ(sample.back(), a.images.back());
  EXPECT_EQ(error_of([] { synthetic_images("s", 4, 0, 3, 10, 1); }),
            "dataset 's': 4 images of 0x0x3 in 10 classes: every size must be >= 1");
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
