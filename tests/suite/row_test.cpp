// Suite rows (suite/row.h): the standard list spelled as the suite's JSON names them, names read
// back into the same rows, and names of no row refused with the accepted forms.
#include "suite/row.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "support/error_of.h"

namespace tessera::suite {
namespace {

TEST(SuiteRows, StandardRowsHaveTheSuitesNamesInOrder) {
  std::vector<std::string> names;
  for (const Row& r : standard_rows()) names.push_back(r.name());
  const std::vector<std::string> want = {
      "gemm_256",
      "gemm_512",
      "gemm_1024",
      "gemm_2048",
      "conv_1x56x56x64x64x3x1x1",
      "conv_1x28x28x128x128x3x1x1",
      "conv_1x14x14x256x256x3x1x1",
      "conv_1x7x7x512x512x3x1x1",
      "conv_64x56x56x64x64x3x1x1",
      "conv_64x28x28x128x128x3x1x1",
      "conv_64x14x14x256x256x3x1x1",
      "conv_64x7x7x512x512x3x1x1",
      "layernorm_512x768",
      "layernorm_2048x768",
      "layernorm_8192x768",
      "softmax_512x512",
      "softmax_2048x2048",
      "softmax_8192x8192",
      "attention_12x512x64",
      "attention_16x512x64",
      "attention_32x512x64",
      "resnet18",
      "resnet50",
      "bert_768",
      "bert_1024",
      "bert_2048",
  };
  EXPECT_EQ(names, want);
}

TEST(SuiteRows, EveryStandardNameParsesBackToItsRow) {
  for (const Row& r : standard_rows()) {
    const Row back = parse_row(r.name());
    EXPECT_EQ(back.kind, r.kind) << r.name();
    EXPECT_EQ(back.dims, r.dims) << r.name();
  }
}

TEST(SuiteRows, OtherShapesOfTheSameWorkloadsParse) {
  EXPECT_EQ(parse_row("gemm_40").dims, std::vector<int>{40});
  const Row c = parse_row("conv_2x9x9x5x7x3x2x0");  // padding 0 is allowed
  EXPECT_EQ(c.kind, RowKind::kConv);
  EXPECT_EQ(c.dims, (std::vector<int>{2, 9, 9, 5, 7, 3, 2, 0}));
  EXPECT_EQ(parse_row("attention_2x16x8").kind, RowKind::kAttention);
  EXPECT_EQ(parse_row("bert_64").dims, std::vector<int>{64});
  const Row r = parse_row("resnet50x32x4");  // depth, image, width
  EXPECT_EQ(r.kind, RowKind::kResNet);
  EXPECT_EQ(r.dims, (std::vector<int>{50, 32, 4}));
  EXPECT_EQ(r.name(), "resnet50x32x4");
}

TEST(SuiteRows, ResNetsOfOtherDepthsOrImagesBelow32AreRefused_bad) {
  for (const char* bad : {"resnet18x32", "resnet18x16x4", "resnet34x32x4", "resnet18x32x0"})
    EXPECT_NE(testing::error_of([&] { parse_row(bad); }).find("unknown row '" + std::string(bad)),
              std::string::npos)
        << bad;
}

TEST(SuiteRows, NamesOfNoRowAreRefusedWithTheForms_bad) {
  for (const char* bad :
       {"", "gemm", "gemm_", "gemm_0", "gemm_-4", "gemm_12x", "gemm_12x12", "gemm_1e3", "conv_1x2",
        "conv_1x4x4x2x2x7x1x1", "conv_1x8x8x0x4x3x1x1", "resnet34", "resnet18x", "softmax_4",
        "layernorm_4x", "attention_1x2x3x4", "bert_", "matmul_8"}) {
    try {
      parse_row(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("unknown row '" + std::string(bad) + "'"), std::string::npos) << what;
      EXPECT_NE(what.find("conv_BxHxWxCinxCoutxKxSxP"), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace tessera::suite
