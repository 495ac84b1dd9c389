#include "isa/shared_image.h"

#include <gtest/gtest.h>

#include "isa/assembler.h"
#include "support/error_of.h"

namespace tessera::isa {
namespace {

Program indexed_program() {
  return assemble(".smem 2\n.word 7, 8\nsmfsr s1, %pid\nsli s2, 3 ;; vmov v1, v2\nhalt\n", "idx.s");
}

TEST(SharedImage, EveryLocalProgramIsTheImagePatchedWithItsIndex) {
  const Program p = indexed_program();
  SharedImage s(write_image(p));
  s.load(5);
  ASSERT_EQ(s.processors(), 5);
  for (int q = 0; q < 5; ++q) {
    EXPECT_EQ(s.index_store()[static_cast<size_t>(q)], static_cast<uint32_t>(q));
    EXPECT_EQ(s.local_program(q), p.with_index(static_cast<uint32_t>(q)));
    std::vector<uint8_t> patched = write_image(p);
    patch_index(patched, static_cast<uint32_t>(q));
    EXPECT_EQ(s.local_image(q), patched);
  }
  EXPECT_EQ(s.image(), write_image(p));  // the shared bytes themselves are never patched
}

TEST(SharedImage, ALaterLoadAndANewImageKeepOneIndexPerProcessor) {
  SharedImage s(write_image(indexed_program()));
  s.load(7);
  s.load(3);
  ASSERT_EQ(s.index_store().size(), 3u);
  const Program other = assemble("sli s1, 1\nhalt\n", "other.s");
  s.set_image(write_image(other));
  EXPECT_EQ(s.local_program(2), other.with_index(2));
}

TEST(SharedImage, NotAnImageOrAProcessorNotLoaded_bad) {
  EXPECT_EQ(testing::error_of([] {
              SharedImage s(std::vector<uint8_t>{1, 2, 3}, "x.img");
            }),
            "x.img: not a tessera program image (bad magic or truncated header)");
  SharedImage s(write_image(indexed_program()), "y.img");
  EXPECT_EQ(testing::error_of([&] { s.load(0); }), "y.img: cannot load onto 0 processors");
  s.load(2);
  EXPECT_EQ(testing::error_of([&] { s.local_image(2); }),
            "y.img: processor 2 is not loaded (0..1)");
  EXPECT_EQ(testing::error_of([&] { s.local_image(-1); }),
            "y.img: processor -1 is not loaded (0..1)");
}

}  // namespace
}  // namespace tessera::isa
