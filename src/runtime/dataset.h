// Datasets for training: labelled images (loading, scaling, seeded shuffling and batching) and
// text (windows of a byte stream for next-byte prediction, runtime/text_windows.h).
//
// Contract:
//   * images are stored one sample after another (rows x cols x 1, i.e. NHWC with one channel,
//     which is also the flat [784] layout of an MLP input): as float values (datasets built in
//     memory), or as the file's bytes (IDX files), whose value is pixel / 255 in [0, 1], converted
//     to float only when a sample is copied out (a batch), so a run converts only the samples it
//     uses;
//   * labels are int32 in [0, classes);
//   * epoch_order(n, seed, epoch) is a Fisher-Yates shuffle (i from n-1 down to 1, j =
//     below(i + 1), swap) driven by SplitMix64(seed ^ (0x9e3779b97f4a7c15 * (epoch + 1)))
//     (common/splitmix64.h), so an epoch's order depends only on (n, seed, epoch): a resumed run
//     needs no generator state beyond the epoch number;
//   * batches cover the epoch order in consecutive slices of `batch` samples; the last partial
//     batch is kept (n % batch samples).
// Text datasets (context > 0): a sample is a window of `context` bytes of `text` (ids) with the
// next byte at every position (labels, context per sample). Shuffled epochs draw every window's
// start (draw_window_starts, one draw per window in batch order) from
// SplitMix64(seed ^ (0x9e3779b97f4a7c15 * epoch)) (epoch 0: SplitMix64(seed)), `count` windows per
// epoch; evaluation (no shuffle) takes the
// consecutive non-overlapping windows from the stream's start (window i at i x context), at most
// `count` and as many as the stream holds.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/splitmix64.h"
#include "runtime/train_model.h"

namespace tessera::runtime {

struct Dataset {
  std::string name;
  std::string source;  // the file it was read from (errors name it); empty if built in memory
  int64_t count = 0;
  int rows = 0, cols = 0;
  int channels = 1;  // per pixel, innermost (NHWC)
  int classes = 0;
  std::vector<float> images;    // count * rows * cols values, or empty (pixels)
  std::vector<uint8_t> pixels;  // count * rows * cols bytes (value pixel / 255), or empty (images)
  std::vector<int32_t> labels;  // count
  // Text datasets: the byte stream and the window length (0: an image dataset).
  std::string text;
  int context = 0;

  bool is_text() const { return context > 0; }
  // Input values per sample: pixels, or the window's bytes.
  int64_t sample_size() const {
    return is_text() ? context : static_cast<int64_t>(rows) * cols * channels;
  }
  // Label values per sample: one class, or the next byte at every position.
  int64_t label_size() const { return is_text() ? context : 1; }
  // Copies image sample s (sample_size values, from images or pixels) to out.
  void copy_image(int64_t s, float* out) const;
};

// An image byte's value: pixel / 255.
inline float pixel_value(uint8_t pixel) {
  return static_cast<float>(pixel) / 255.0f;
}

// A text dataset over `text` with windows of `context` bytes and `count` windows (samples) per
// epoch (Error naming `source` if the stream does not hold one window).
Dataset text_dataset(std::string name, std::string source, std::string text, int context,
                     int64_t count);

// Loads an IDX image file [n, rows, cols] and label file [n]; checks n matches and every label
// is in [0, classes). Errors name the file and the problem.
Dataset load_idx_dataset(const std::string& images_path, const std::string& labels_path,
                         int classes);

// Refuses (tessera::Error) a dataset whose samples are not `model`'s input, before anything runs:
// a flat input [n] takes images of rows x cols x channels == n values; an image input [h, w]
// takes h x w images of one channel, [h, w, c] h x w images of c channels. The error names the
// image file (or the dataset), the shape found and the shape expected:
//   "<file>: images are 27x29 (783 values per sample), but model 'mlp' takes input [784]"
// A text dataset fits gpt models only, whose context is the dataset's; an image dataset fits
// layer-list models only.
void check_fits_model(const Dataset& d, const TrainModel& model);

enum class Split : uint8_t { kTrain, kTest };

// The Debian package dataset-fashion-mnist installs here.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// Fashion-MNIST from `dir` (train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz],
// t10k-...): the plain name is used if it exists, else the .gz one. A missing file is an error
// naming the path and the package to install.
Dataset load_fashion_mnist(const std::string& dir, Split split);
// Both splits ({train, test}), read at the same time on two threads when `threads` >= 2, else one
// after the other: the same datasets and, if both fail, the train split's error.
std::pair<Dataset, Dataset> load_fashion_mnist_splits(const std::string& dir, int threads = 2);

// `count` random images of side x side x channels values and their labels, all drawn from
// SplitMix64(seed): the images first, value by value (unit(): uniform in [0, 1), exact in float),
// then the labels (below(classes)). For timing real-size models
// (e.g. 3 x 224 x 224) where no dataset of that size is installed; nothing can be learned.
Dataset synthetic_images(std::string name, int64_t count, int side, int channels, int classes,
                         uint64_t seed);

// A text dataset of `count` windows of `context` bytes over a stream of count x context + 1
// random bytes (SplitMix64(seed), below(256) each): token ids for timing a model that takes text,
// with labels nothing can predict.
Dataset synthetic_text(std::string name, int64_t count, int context, uint64_t seed);

// The first n samples (n <= count) as a new dataset (fast tests, subsets).
Dataset take(const Dataset& d, int64_t n);

// The generator seed of an epoch: seed ^ (0x9e3779b97f4a7c15 * (epoch + 1)).
uint64_t epoch_seed(uint64_t seed, int64_t epoch);
std::vector<int64_t> epoch_order(int64_t n, uint64_t seed, int64_t epoch);

struct Batch {
  int64_t first = 0;  // index of the batch's first slot in the epoch order
  int size = 0;
  std::vector<float> images;    // size * sample_size (image datasets)
  std::vector<int32_t> ids;     // size * context (text datasets)
  std::vector<int32_t> labels;  // size * label_size
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
  int64_t m_end = 0;    // samples of the epoch
  SplitMix64 m_rng{0};  // text: the epoch's window starts
};

}  // namespace tessera::runtime
