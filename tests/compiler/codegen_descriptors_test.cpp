// The Codegen's DMA descriptors: the first kDescriptorWords / 4 in scalar memory's descriptor
// region, further ones at the top of scalar memory growing down, as program data; each distinct
// descriptor once; an Error when they would meet the kernels' data.
#include <gtest/gtest.h>

#include "common/error.h"
#include "compiler/codegen.h"
#include "support/error_of.h"

namespace tessera::compiler {
namespace {

core::CoreSpec spec_with_smem(int64_t words) {
  core::CoreSpec s;
  s.smem_words = words;
  return s;
}

TEST(CodegenDescriptors, BeyondTheRegionTheyGrowDownFromTheTopOfScalarMemory) {
  const core::CoreSpec spec = spec_with_smem(1024);
  Codegen cg(spec);
  const int64_t region = kDescriptorWords / 4;
  for (int64_t i = 0; i < region; ++i) EXPECT_EQ(cg.descriptor(i + 1, 1, 1, 1), 4 * i);
  EXPECT_EQ(cg.descriptor(1000, 1, 1, 1), 1024 - 4);
  EXPECT_EQ(cg.descriptor(1001, 1, 1, 1), 1024 - 8);
  EXPECT_EQ(cg.descriptor(1000, 1, 1, 1), 1024 - 4);  // the same descriptor again
  const isa::Program p = cg.finish();
  int found = 0;
  for (const isa::DataSegment& d : p.data)
    if (d.space == isa::Space::Smem && d.address == 1024 - 8) {
      EXPECT_EQ(d.words, (std::vector<uint32_t>{1001, 1, 1, 1}));
      ++found;
    }
  EXPECT_EQ(found, 1);
}

TEST(CodegenDescriptors, DescriptorsAndKernelDataMeeting_bad) {
  const core::CoreSpec spec = spec_with_smem(kDescriptorWords + 8);
  Codegen cg(spec);
  for (int64_t i = 0; i < kDescriptorWords / 4 + 2; ++i) cg.descriptor(i + 1, 1, 1, 1);
  EXPECT_NE(testing::error_of([&] {
              cg.descriptor(5000, 1, 1, 1);
            }).find("has no room for more above the kernels' data"),
            std::string::npos);
  EXPECT_NE(testing::error_of([&] { cg.reserve_smem(1); }).find("cannot hold 1 more"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera::compiler
