#include "runtime/idx.h"

#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/error.h"
#include "runtime/dataset.h"
#include "support/error_of.h"

namespace tessera::runtime {
namespace {

using testing::error_of;

// A fresh directory per test for the small IDX files the tests write.
class IdxFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_dir = std::filesystem::temp_directory_path() /
            ("tessera_idx_" + std::to_string(::getpid()) + "_" + info->name());
    std::filesystem::create_directories(m_dir);
  }
  void TearDown() override { std::filesystem::remove_all(m_dir); }
  std::string path(const std::string& name) const { return (m_dir / name).string(); }
  std::string raw(const std::string& name, const std::vector<uint8_t>& bytes) const {
    std::ofstream out(path(name), std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    return path(name);
  }
  // Writes n 2x3 images with pixel values i*10+p and labels i % classes.
  void pair(const std::string& stem, int n, bool gzip, int classes = 10) const {
    std::vector<uint8_t> pixels, labels;
    for (int i = 0; i < n; ++i) {
      for (int p = 0; p < 6; ++p) pixels.push_back(static_cast<uint8_t>(i * 10 + p));
      labels.push_back(static_cast<uint8_t>(i % classes));
    }
    const std::string ext = gzip ? ".gz" : "";
    write_idx(path(stem + "-images-idx3-ubyte" + ext), {n, 2, 3}, pixels, gzip);
    write_idx(path(stem + "-labels-idx1-ubyte" + ext), {n}, labels, gzip);
  }
  std::filesystem::path m_dir;
};

TEST_F(IdxFiles, PlainAndGzipFilesReadTheSameArray) {
  const std::vector<uint8_t> data{1, 2, 3, 4, 5, 255};
  write_idx(path("a"), {2, 3}, data, false);
  write_idx(path("a.gz"), {2, 3}, data, true);
  for (const char* name : {"a", "a.gz"}) {
    const IdxArray a = read_idx(path(name));
    EXPECT_EQ(a.dims, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(a.data, data);
  }
  EXPECT_NE(std::filesystem::file_size(path("a")), std::filesystem::file_size(path("a.gz")));
}

TEST_F(IdxFiles, DatasetScalesPixelsAndKeepsLabels) {
  pair("train", 5, true);
  const Dataset d =
      load_idx_dataset(path("train-images-idx3-ubyte.gz"), path("train-labels-idx1-ubyte.gz"), 10);
  EXPECT_EQ(d.count, 5);
  EXPECT_EQ(d.rows, 2);
  EXPECT_EQ(d.cols, 3);
  EXPECT_EQ(d.labels, (std::vector<int32_t>{0, 1, 2, 3, 4}));
  std::vector<float> sample(6);
  d.copy_image(0, sample.data());
  EXPECT_EQ(sample[0], 0.0f);
  d.copy_image(2, sample.data());
  EXPECT_EQ(sample[1], 21.0f / 255.0f);  // sample 2, pixel 1
}

// The images stay the file's bytes; a sample is converted (pixel / 255) when copied out.
TEST_F(IdxFiles, DatasetKeepsTheFileBytesAndConvertsEachSampleWhenCopied) {
  pair("train", 4, false);
  const Dataset d =
      load_idx_dataset(path("train-images-idx3-ubyte"), path("train-labels-idx1-ubyte"), 10);
  EXPECT_TRUE(d.images.empty());
  ASSERT_EQ(d.pixels.size(), 24u);
  std::vector<float> sample(6);
  for (int i = 0; i < 4; ++i) {
    d.copy_image(i, sample.data());
    for (int p = 0; p < 6; ++p) {
      EXPECT_EQ(d.pixels[static_cast<size_t>(i * 6 + p)], i * 10 + p);
      EXPECT_EQ(sample[static_cast<size_t>(p)], static_cast<float>(i * 10 + p) / 255.0f);
    }
  }
}

TEST_F(IdxFiles, FashionMnistLayoutPrefersPlainFilesThenGzip) {
  pair("t10k", 3, false);
  pair("train", 4, true);
  EXPECT_EQ(load_fashion_mnist(m_dir.string(), Split::kTest).count, 3);
  EXPECT_EQ(load_fashion_mnist(m_dir.string(), Split::kTrain).count, 4);
}

TEST_F(IdxFiles, CorruptFilesAreErrorsNamingTheFileAndTheProblem) {
  const std::vector<uint8_t> header{0, 0, 8, 1, 0, 0, 0, 4};
  std::vector<uint8_t> ok = header;
  ok.insert(ok.end(), {1, 2, 3, 4});
  EXPECT_EQ(error_of([&] { read_idx(path("missing")); }),
            path("missing") + ": cannot open IDX file");
  EXPECT_EQ(error_of([&] {
              read_idx(raw("short", {0, 0}));
            }),
            path("short") + ": truncated header (file shorter than 4 bytes)");
  EXPECT_EQ(error_of([&] {
              read_idx(raw("magic", {'P', 'K', 3, 4, 0, 0}));
            }),
            path("magic") + ": bad magic: first two bytes must be 0, got 80 75 (not an IDX file)");
  EXPECT_EQ(error_of([&] {
              read_idx(raw("type", {0, 0, 0x0d, 1, 0, 0, 0, 1, 0}));
            }),
            path("type") + ": unsupported element type 13 (only 8 = unsigned byte)");
  EXPECT_EQ(error_of([&] {
              read_idx(raw("ndim", {0, 0, 8, 9}));
            }),
            path("ndim") + ": bad dimension count 9 (expected 1..4)");
  EXPECT_EQ(error_of([&] {
              read_idx(raw("dims", {0, 0, 8, 2, 0, 0, 0, 4, 0}));
            }),
            path("dims") + ": truncated header: missing size of dimension 1");
  EXPECT_EQ(error_of([&] {
              read_idx(raw("zero", {0, 0, 8, 1, 0, 0, 0, 0}));
            }),
            path("zero") + ": dimension 0 has size 0");
  std::vector<uint8_t> cut = header;
  cut.insert(cut.end(), {1, 2});
  EXPECT_EQ(error_of([&] { read_idx(raw("cut", cut)); }),
            path("cut") + ": truncated data: expected 4 data bytes, found 2");
  std::vector<uint8_t> extra = ok;
  extra.push_back(9);
  EXPECT_EQ(error_of([&] { read_idx(raw("extra", extra)); }),
            path("extra") + ": trailing bytes after the 4 data bytes");
  EXPECT_EQ(read_idx(raw("ok", ok)).data, (std::vector<uint8_t>{1, 2, 3, 4}));
}

TEST_F(IdxFiles, DamagedGzipStreamsAreErrors) {
  std::vector<uint8_t> data(4000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 + i / 13);
  write_idx(path("good.gz"), {4000}, data, true);
  std::ifstream in(path("good.gz"), std::ios::binary);
  std::vector<uint8_t> gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<uint8_t> truncated(gz.begin(), gz.begin() + static_cast<long>(gz.size() / 2));
  EXPECT_EQ(error_of([&] { read_idx(raw("trunc.gz", truncated)); }),
            path("trunc.gz") + ": truncated gzip stream (unexpected end of file)");
  std::vector<uint8_t> flipped = gz;
  flipped[gz.size() / 2] ^= 0xff;
  const std::string msg = error_of([&] { read_idx(raw("flip.gz", flipped)); });
  EXPECT_EQ(msg.rfind(path("flip.gz") + ": corrupt gzip stream: ", 0), 0u) << msg;
}

// gzip members written one after another (what `cat a.gz b.gz` makes) read as one stream, on the
// whole-file path; a gzip stream holding more or less than the header announces takes the stream
// path and gets its error.
TEST_F(IdxFiles, GzipMembersReadAsOneStreamAndLengthMismatchesAreErrors) {
  const std::vector<uint8_t> bytes{0, 0, 8, 1, 0, 0, 0, 5, 10, 20, 30, 40, 50};
  // Writes bytes [0, split) and [split, end) of `content` as two gzip members.
  auto members = [&](const std::string& name, const std::vector<uint8_t>& content, size_t split,
                     size_t end) {
    for (const auto& [from, to] : {std::pair{size_t{0}, split}, std::pair{split, end}}) {
      gzFile f = gzopen(path(name).c_str(), from == 0 ? "wb" : "ab");
      EXPECT_NE(f, nullptr);
      EXPECT_EQ(gzwrite(f, content.data() + from, static_cast<unsigned>(to - from)),
                static_cast<int>(to - from));
      EXPECT_EQ(gzclose(f), Z_OK);
    }
    return path(name);
  };
  for (const size_t split : {size_t{3}, size_t{8}, size_t{11}}) {
    const IdxArray a = read_idx(members("two.gz", bytes, split, bytes.size()));
    EXPECT_EQ(a.dims, (std::vector<int64_t>{5}));
    EXPECT_EQ(a.data, (std::vector<uint8_t>{10, 20, 30, 40, 50}));
  }
  EXPECT_EQ(error_of([&] { read_idx(members("short.gz", bytes, 8, bytes.size() - 1)); }),
            path("short.gz") + ": truncated data: expected 5 data bytes, found 4");
  std::vector<uint8_t> longer = bytes;
  longer.push_back(60);
  EXPECT_EQ(error_of([&] { read_idx(members("long.gz", longer, 8, longer.size())); }),
            path("long.gz") + ": trailing bytes after the 5 data bytes");
}

TEST_F(IdxFiles, MismatchedPairsAreErrors) {
  pair("a", 3, false);
  pair("b", 4, false);
  EXPECT_EQ(error_of([&] {
              load_idx_dataset(path("a-images-idx3-ubyte"), path("b-labels-idx1-ubyte"), 10);
            }),
            path("b-labels-idx1-ubyte") + ": label count 4 differs from the image count 3 of " +
                path("a-images-idx3-ubyte"));
  EXPECT_EQ(error_of([&] {
              load_idx_dataset(path("a-images-idx3-ubyte"), path("a-labels-idx1-ubyte"), 2);
            }),
            path("a-labels-idx1-ubyte") + ": label 2 of sample 2 is out of range [0, 2)");
  EXPECT_EQ(error_of([&] {
              load_idx_dataset(path("a-labels-idx1-ubyte"), path("a-labels-idx1-ubyte"), 10);
            }),
            path("a-labels-idx1-ubyte") +
                ": image file must have 3 dimensions [count, rows, cols], got 1");
  EXPECT_EQ(
      error_of([&] { load_fashion_mnist(path("nowhere"), Split::kTrain); }),
      path("nowhere") +
          "/train-images-idx3-ubyte.gz: Fashion-MNIST file not found (install the Debian package "
          "dataset-fashion-mnist, or pass --data-dir with the IDX files)");
}

}  // namespace
}  // namespace tessera::runtime
