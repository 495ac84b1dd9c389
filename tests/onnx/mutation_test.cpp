// The importer on damaged models: every byte-flipped or truncated copy of the fuzz seeds
// (fuzz/seeds/fuzz_onnx) imports or ends in a tessera::Error, never in another exception.
#include <filesystem>

#include <gtest/gtest.h>

#include "common/error.h"
#include "common/splitmix64.h"
#include "onnx/importer.h"
#include "support/temp_dir.h"

namespace tessera::onnx_import {
namespace {

TEST(OnnxImportMutation, DamagedSeedsImportOrFailWithAnError) {
  const std::filesystem::path seeds = std::string(TESSERA_SOURCE_DIR) + "/fuzz/seeds/fuzz_onnx";
  SplitMix64 rng(22);
  int imported = 0, refused = 0;
  for (const auto& e : std::filesystem::directory_iterator(seeds)) {
    const std::string bytes = testing::read_bytes(e.path().string());
    for (int trial = 0; trial < 300; ++trial) {
      std::string m = bytes;
      if (trial % 10 == 0) {
        m.resize(rng.next() % m.size());
      } else {
        for (int k = 0; k < 1 + trial % 4; ++k)
          m[rng.next() % m.size()] = static_cast<char>(rng.next() & 0xff);
      }
      try {
        import_model(parse_model(m, "m.onnx", "/nonexistent"));
        ++imported;
      } catch (const Error& err) {
        EXPECT_EQ(std::string(err.why()).rfind("internal check", 0), std::string::npos)
            << e.path() << " trial " << trial << ": " << err.what();
        ++refused;
      }
    }
  }
  EXPECT_GT(imported, 0);
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace tessera::onnx_import
