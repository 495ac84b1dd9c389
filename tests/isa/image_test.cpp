#include "isa/image.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "isa/assembler.h"
#include "isa/encoding.h"
#include "isa/random_bundle.h"

namespace tessera::isa {
namespace {

Program small_program() {
  return assemble(
      ".smem 2\n.word 7, 8\n.vmem 3\n.float 1.5\ntop: sli s1, 2 ;; vmov v1, v2\nloop s1, "
      "top\nhalt\n",
      "small.s");
}

std::string read_error(const std::vector<uint8_t>& bytes) {
  try {
    read_image(bytes, "img");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Image, WriteThenReadGivesTheSameProgramWithAndWithoutDebugInfo) {
  Program p = small_program();
  EXPECT_FALSE(p.debug.empty());
  EXPECT_EQ(read_image(write_image(p)), p);
  EXPECT_EQ(read_image(write_image(p.without_debug())), p.without_debug());
  Program r = random_program(5, 100);
  EXPECT_EQ(read_image(write_image(r)), r);
  EXPECT_EQ(read_image(write_image(Program{})), Program{});
}

TEST(Image, WritingDebugLinesThatDoNotMatchTheCodeIsRefused_bad) {
  Program p = small_program();
  p.debug.lines.pop_back();
  EXPECT_THROW(write_image(p), Error);
}

TEST(Image, LayoutMatchesTheDocumentedHeader) {
  Program p = small_program().without_debug();
  auto bytes = write_image(p);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 8), std::string(kImageMagic, 8));
  EXPECT_EQ(load_le32(&bytes[8]), kImageVersion);
  EXPECT_EQ(load_le32(&bytes[12]), 0u);
  EXPECT_EQ(load_le32(&bytes[20]), 3u);
  EXPECT_EQ(load_le32(&bytes[24]), 2u);
  EXPECT_EQ(bytes.size(), kImageHeaderBytes + 3 * kBundleBytes + (16 + 8) + (16 + 4));
}

TEST(Image, IndexWordIsPatchedPerProcessor) {
  Program p = small_program();
  EXPECT_EQ(p.with_index(5).index, 5u);
  EXPECT_EQ(p.with_index(5).code, p.code);
  auto bytes = write_image(p);
  patch_index(bytes, 0xabcd);
  Program q = read_image(bytes);
  EXPECT_EQ(q.index, 0xabcdu);
  EXPECT_EQ(q.with_index(0), p);
  EXPECT_EQ(write_image(p.with_index(0xabcd)), bytes);
}

TEST(Image, TruncationAtEveryOffsetIsAnError_bad) {
  auto bytes = write_image(small_program());
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + n);
    EXPECT_THROW(read_image(cut), Error) << "length " << n;
  }
}

TEST(Image, MalformedImagesGiveClearErrors_bad) {
  auto good = write_image(small_program().without_debug());
  auto with = [&](size_t offset, uint32_t v) {
    auto b = good;
    store_le32(&b[offset], v);
    return b;
  };
  EXPECT_EQ(read_error({'h', 'e', 'l', 'l', 'o'}), "img: not a tessera program image (bad magic)");
  EXPECT_EQ(read_error(with(8, 2)), "img: unsupported image version 2 (this build reads 1)");
  EXPECT_EQ(read_error(with(12, 6)), "img: unknown image flags 0x6");
  EXPECT_EQ(read_error(with(28, 4)), "img: debug section size is 4 but the debug flag is not set");
  EXPECT_EQ(
      read_error(with(20, 0xffffffff)),
      "img: truncated image: the code needs 377957121960 bytes at offset 32, but only 308 remain");
  // Two bundles: the third is read as two empty data segments, leaving 100 bytes over.
  EXPECT_EQ(
      read_error(with(20, 2)),
      "img: 100 bytes after the end of the image (the header's counts disagree with its size)");
  EXPECT_EQ(read_error(with(24, 3)),
            "img: truncated image: a data segment header needs 16 bytes at offset 340, but only 0 "
            "remain");
  size_t seg0 = kImageHeaderBytes + 3 * kBundleBytes;
  EXPECT_EQ(read_error(with(seg0, 3)),
            "img: data segment 0 has unknown space 3 (0 smem, 1 hbm, 2 vmem)");
  auto extra = good;
  extra.push_back(0);
  EXPECT_EQ(read_error(extra),
            "img: 1 bytes after the end of the image (the header's counts disagree with its size)");
  auto bad_op = good;
  bad_op[kImageHeaderBytes + kBundleBytes + 8 * 2] =
      static_cast<uint8_t>(Opcode::SADD);  // bundle 1, slot v0
  EXPECT_EQ(read_error(bad_op),
            "img: bundle 1 slot v0: invalid encoding: 'sadd' is a scalar op; slot v0 takes "
            "vector-alu ops");
}

TEST(Image, DebugSectionInconsistenciesAreErrors_bad) {
  Program p = small_program();
  auto good = write_image(p);
  size_t debug_start = good.size() - load_le32(&good[28]);
  auto lines = good;
  store_le32(&lines[debug_start + 4 + p.debug.source.size()], 2);  // 2 lines for 3 bundles
  EXPECT_EQ(read_error(lines), "img: debug section has 2 source lines for 3 bundles");
  auto size = good;
  uint32_t debug_size = load_le32(&good[28]);
  store_le32(&size[28], debug_size + 1);
  size.push_back(0);
  EXPECT_EQ(read_error(size), fmt::format("img: debug section is {} bytes, but the header says {}",
                                          debug_size, debug_size + 1));
  auto cut = good;
  store_le32(&cut[28], debug_size - 1);
  cut.pop_back();
  EXPECT_EQ(
      read_error(cut),
      fmt::format(
          "img: truncated image: a debug symbol needs 4 bytes at offset {}, but only 3 remain",
          cut.size() - 3));
}

TEST(Image, RandomlyCorruptedImagesNeverCrash) {
  auto good = write_image(small_program());
  RandomBundleGenerator rng(11);
  int accepted = 0;
  for (int i = 0; i < 3000; ++i) {
    auto b = good;
    int flips = 1 + static_cast<int>(rng.below(4));
    for (int k = 0; k < flips; ++k)
      b[rng.below(b.size())] ^= static_cast<uint8_t>(1u << rng.below(8));
    try {
      Program p = read_image(b);
      EXPECT_EQ(read_image(write_image(p)), p);
      ++accepted;
    } catch (const Error&) {
    }
  }
  EXPECT_GT(accepted, 0);  // some flips (in data words) leave a valid image
}

TEST(Image, FilesRoundTripAndMissingFilesAreNamed_bad) {
  std::string path = std::string(TESSERA_BINARY_DIR) + "/isa_image_test.bin";
  write_image_file(path, small_program());
  EXPECT_EQ(read_image_file(path), small_program());
  EXPECT_EQ(load_program(path), small_program());
  EXPECT_THROW(read_image_file(path + ".missing"), Error);
}

}  // namespace
}  // namespace tessera::isa
