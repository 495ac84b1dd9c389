// Labelled image datasets for training: loading, scaling, seeded shuffling and batching.
//
// Contract:
//   * images are stored as float, one sample after another (rows x cols x 1, i.e. NHWC with one
//     channel, which is also the flat [784] layout of an MLP input), pixel / 255 in [0, 1];
//   * labels are int32 in [0, classes);
//   * epoch_order(n, seed, epoch) is a Fisher-Yates shuffle (i from n-1 down to 1, j =
//     below(i + 1), swap) driven by SplitMix64(seed ^ (0x9e3779b97f4a7c15 * (epoch + 1)))
//     (common/splitmix64.h), so an epoch's order depends only on (n, seed, epoch): a resumed run
//     needs no generator state beyond the epoch number;
//   * batches cover the epoch order in consecutive slices of `batch` samples; the last partial
//     batch is kept (n % batch samples).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/model.h"

namespace tessera::runtime {

struct Dataset {
  std::string name;
  std::string source;  // the image file it was read from (errors name it); empty if built in memory
  int64_t count = 0;
  int rows = 0, cols = 0;
  int classes = 0;
  std::vector<float> images;    // count * rows * cols
  std::vector<int32_t> labels;  // count

  int64_t sample_size() const { return static_cast<int64_t>(rows) * cols; }
};

// Loads an IDX image file [n, rows, cols] and label file [n]; checks n matches and every label
// is in [0, classes). Errors name the file and the problem.
Dataset load_idx_dataset(const std::string& images_path, const std::string& labels_path,
                         int classes);

// Refuses (tessera::Error) a dataset whose samples are not `model`'s input, before anything runs:
// a flat input [n] takes images of rows x cols == n pixels; an image input [h, w] or [h, w, 1]
// takes h x w images (one channel). The error names the image file (or the dataset), the shape
// found and the shape expected:
//   "<file>: images are 27x29 (783 values per sample), but model 'mlp' takes input [784]"
void check_fits_model(const Dataset& d, const graph::ModelSpec& model);

enum class Split : uint8_t { kTrain, kTest };

// The Debian package dataset-fashion-mnist installs here.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// Fashion-MNIST from `dir` (train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz],
// t10k-...): the plain name is used if it exists, else the .gz one. A missing file is an error
// naming the path and the package to install.
Dataset load_fashion_mnist(const std::string& dir, Split split);

// The first n samples (n <= count) as a new dataset (fast tests, subsets).
Dataset take(const Dataset& d, int64_t n);

std::vector<int64_t> epoch_order(int64_t n, uint64_t seed, int64_t epoch);

struct Batch {
  int64_t first = 0;  // index of the batch's first slot in the epoch order
  int size = 0;
  std::vector<float> images;    // size * sample_size
  std::vector<int32_t> labels;  // size
};

class Batcher {
 public:
  // shuffle = false keeps the file order (evaluation).
  Batcher(const Dataset& data, int batch, uint64_t seed, bool shuffle);

  void start_epoch(int64_t epoch);
  // Fills `out` with the next batch of the epoch; false when the epoch is done.
  bool next(Batch& out);
  int64_t batches_per_epoch() const;

 private:
  const Dataset& m_data;
  int m_batch;
  uint64_t m_seed;
  bool m_shuffle;
  std::vector<int64_t> m_order;
  int64_t m_pos = 0;
};

}  // namespace tessera::runtime
