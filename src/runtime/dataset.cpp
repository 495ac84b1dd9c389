#include "runtime/dataset.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <future>
#include <numeric>

#include <fmt/format.h>

#include "common/error.h"
#include "common/splitmix64.h"
#include "runtime/idx.h"
#include "runtime/text_windows.h"

namespace tessera::runtime {

Dataset load_idx_dataset(const std::string& images_path, const std::string& labels_path,
                         int classes) {
  IdxArray images = read_idx(images_path);  // its bytes move into the dataset
  const IdxArray labels = read_idx(labels_path);
  if (images.dims.size() != 3)
    throw Error(images_path, "image file must have 3 dimensions [count, rows, cols], got " +
                                 std::to_string(images.dims.size()));
  if (labels.dims.size() != 1)
    throw Error(labels_path, "label file must have 1 dimension [count], got " +
                                 std::to_string(labels.dims.size()));
  if (labels.dims[0] != images.dims[0])
    throw Error(labels_path, "label count " + std::to_string(labels.dims[0]) +
                                 " differs from the image count " + std::to_string(images.dims[0]) +
                                 " of " + images_path);
  if (images.dims[1] > INT32_MAX || images.dims[2] > INT32_MAX)
    throw Error(images_path, "images of " + std::to_string(images.dims[1]) + "x" +
                                 std::to_string(images.dims[2]) + " pixels are too large");
  Dataset d;
  d.source = images_path;
  d.count = images.dims[0];
  d.rows = static_cast<int>(images.dims[1]);
  d.cols = static_cast<int>(images.dims[2]);
  d.classes = classes;
  d.labels.resize(static_cast<size_t>(d.count));
  for (int64_t i = 0; i < d.count; ++i) {
    if (labels.data[i] >= classes)
      throw Error(labels_path, "label " + std::to_string(labels.data[i]) + " of sample " +
                                   std::to_string(i) + " is out of range [0, " +
                                   std::to_string(classes) + ")");
    d.labels[i] = labels.data[i];
  }
  d.pixels = std::move(images.data);
  return d;
}

Dataset text_dataset(std::string name, std::string source, std::string text, int context,
                     int64_t count) {
  if (context < 1 || static_cast<int64_t>(text.size()) < int64_t{context} + 1)
    throw Error(source.empty() ? "dataset '" + name + "'" : source,
                fmt::format("a text of {} bytes does not hold a window of context {}", text.size(),
                            context));
  Dataset d;
  d.name = std::move(name);
  d.source = std::move(source);
  d.text = std::move(text);
  d.context = context;
  d.count = count;
  d.classes = 256;
  return d;
}

void check_fits_model(const Dataset& d, const TrainModel& m) {
  const std::string where = d.source.empty() ? "dataset '" + d.name + "'" : d.source;
  const int context = m.context();
  if (d.is_text() != (context > 0))
    throw Error(where,
                fmt::format("{} dataset, but model '{}' {}", d.is_text() ? "a text" : "an image",
                            m.name(), context > 0 ? "takes text" : "takes images"));
  if (context > 0) {
    if (context != d.context)
      throw Error(where, fmt::format("windows of {} bytes, but model '{}' has context {}",
                                     d.context, m.name(), context));
    return;
  }
  const graph::ModelSpec& model = m.spec;
  const graph::Shape& in = model.input;
  const bool flat = in.size() == 1 && in[0] == d.sample_size();
  const int64_t channels = in.size() == 3 ? in[2] : 1;
  const bool image = (in.size() == 2 || in.size() == 3) && in[0] == d.rows && in[1] == d.cols &&
                     channels == d.channels;
  if (flat || image) return;
  const std::string depth = d.channels == 1 ? "" : fmt::format("x{}", d.channels);
  throw Error(
      where, fmt::format("images are {}x{}{} ({} values per sample), but model '{}' takes input {}",
                         d.rows, d.cols, depth, d.sample_size(), model.name, graph::shape_str(in)));
}

Dataset load_fashion_mnist(const std::string& dir, Split split) {
  const std::string prefix = split == Split::kTrain ? "train" : "t10k";
  auto locate = [&](const std::string& stem) {
    std::error_code ec;  // an unreadable or overlong path counts as missing
    const std::string plain = dir + "/" + stem;
    if (std::filesystem::exists(plain, ec)) return plain;
    const std::string gz = plain + ".gz";
    if (std::filesystem::exists(gz, ec)) return gz;
    throw Error(gz,
                "Fashion-MNIST file not found (install the Debian package dataset-fashion-mnist, "
                "or pass --data-dir with the IDX files)");
  };
  const std::string images = locate(prefix + "-images-idx3-ubyte");
  const std::string labels = locate(prefix + "-labels-idx1-ubyte");
  Dataset d = load_idx_dataset(images, labels, 10);
  d.name = "fashion-mnist/" + prefix;
  return d;
}

std::pair<Dataset, Dataset> load_fashion_mnist_splits(const std::string& dir, int threads) {
  auto test = std::async(threads >= 2 ? std::launch::async : std::launch::deferred,
                         [&dir] { return load_fashion_mnist(dir, Split::kTest); });
  Dataset train = load_fashion_mnist(dir, Split::kTrain);
  return {std::move(train), test.get()};
}

void Dataset::copy_image(int64_t s, float* out) const {
  const int64_t ss = sample_size();
  if (pixels.empty()) {
    std::copy_n(images.begin() + s * ss, ss, out);
    return;
  }
  const uint8_t* p = pixels.data() + s * ss;
  for (int64_t i = 0; i < ss; ++i) out[i] = pixel_value(p[i]);
}

Dataset synthetic_images(std::string name, int64_t count, int side, int channels, int classes,
                         uint64_t seed) {
  if (count < 1 || side < 1 || channels < 1 || classes < 1)
    throw Error("dataset '" + name + "'",
                fmt::format("{} images of {}x{}x{} in {} classes: every size must be >= 1", count,
                            side, side, channels, classes));
  Dataset d;
  d.name = std::move(name);
  d.count = count;
  d.rows = d.cols = side;
  d.channels = channels;
  d.classes = classes;
  SplitMix64 rng(seed);
  d.images.resize(static_cast<size_t>(count * d.sample_size()));
  for (float& x : d.images) x = static_cast<float>(rng.unit());
  d.labels.resize(static_cast<size_t>(count));
  for (int32_t& y : d.labels) y = static_cast<int32_t>(rng.below(static_cast<uint64_t>(classes)));
  return d;
}

Dataset synthetic_text(std::string name, int64_t count, int context, uint64_t seed) {
  if (count < 1 || context < 1)
    throw Error("dataset '" + name + "'",
                fmt::format("{} windows of {} bytes: both must be >= 1", count, context));
  SplitMix64 rng(seed);
  std::string text(static_cast<size_t>(count * context + 1), '\0');
  for (char& c : text) c = static_cast<char>(rng.below(256));
  return text_dataset(std::move(name), "", std::move(text), context, count);
}

Dataset take(const Dataset& d, int64_t n) {
  TESSERA_CHECK(n >= 0 && n <= d.count, "take: n outside [0, count]");
  Dataset out = d;
  out.count = n;
  const auto values = static_cast<size_t>(n * d.sample_size());
  if (!out.images.empty()) out.images.resize(values);
  if (!out.pixels.empty()) out.pixels.resize(values);
  out.labels.resize(static_cast<size_t>(n));
  return out;
}

uint64_t epoch_seed(uint64_t seed, int64_t epoch) {
  return seed ^ (0x9e3779b97f4a7c15ull * static_cast<uint64_t>(epoch + 1));
}

std::vector<int64_t> epoch_order(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  SplitMix64 rng(epoch_seed(seed, epoch));
  for (int64_t i = n - 1; i >= 1; --i)
    std::swap(order[i], order[rng.below(static_cast<uint64_t>(i + 1))]);
  return order;
}

Batcher::Batcher(const Dataset& data, int batch, uint64_t seed, bool shuffle)
    : m_data(data), m_batch(batch), m_seed(seed), m_shuffle(shuffle) {
  if (batch < 1) throw Error("batcher", "batch size must be >= 1, got " + std::to_string(batch));
  start_epoch(0);
}

void Batcher::start_epoch(int64_t epoch) {
  m_pos = 0;
  m_end = m_data.count;
  if (m_data.is_text()) {
    m_rng = SplitMix64(m_seed ^ (0x9e3779b97f4a7c15ull * static_cast<uint64_t>(epoch)));
    if (!m_shuffle)  // the non-overlapping windows the stream holds
      m_end =
          std::min<int64_t>(m_end, (static_cast<int64_t>(m_data.text.size()) - 1) / m_data.context);
    return;
  }
  if (m_shuffle) {
    m_order = epoch_order(m_data.count, m_seed, epoch);
  } else {
    m_order.resize(static_cast<size_t>(m_data.count));
    std::iota(m_order.begin(), m_order.end(), int64_t{0});
  }
}

bool Batcher::next(Batch& out) {
  if (m_pos >= m_end) return false;
  const int64_t size = std::min<int64_t>(m_batch, m_end - m_pos);
  const int64_t ss = m_data.sample_size();
  out.first = m_pos;
  out.size = static_cast<int>(size);
  if (m_data.is_text()) {
    std::vector<int64_t> starts(static_cast<size_t>(size));
    if (m_shuffle) {
      starts = draw_window_starts(static_cast<int64_t>(m_data.text.size()), m_data.context,
                                  static_cast<int>(size), m_rng);
    } else {
      for (int64_t i = 0; i < size; ++i) starts[static_cast<size_t>(i)] = (m_pos + i) * ss;
    }
    out.images.clear();
    out.ids.resize(static_cast<size_t>(size * ss));
    out.labels.resize(static_cast<size_t>(size * ss));
    fill_windows(m_data.text, starts, m_data.context, out.ids.data(), out.labels.data());
    m_pos += size;
    return true;
  }
  out.ids.clear();
  out.images.resize(static_cast<size_t>(size * ss));
  out.labels.resize(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) {
    const int64_t s = m_order[m_pos + i];
    m_data.copy_image(s, out.images.data() + i * ss);
    out.labels[i] = m_data.labels[s];
  }
  m_pos += size;
  return true;
}

int64_t Batcher::batches_per_epoch() const {
  return (m_data.count + m_batch - 1) / m_batch;
}

}  // namespace tessera::runtime
