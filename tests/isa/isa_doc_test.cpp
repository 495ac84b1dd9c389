#include "isa/isa_doc.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "isa/opcodes.h"

namespace tessera::isa {
namespace {

// docs/isa.md is generated; UPDATE_GOLDEN=1 rewrites it from the opcode table.
TEST(IsaDoc, CheckedInReferenceMatchesTheOpcodeTable) {
  std::string path = std::string(TESSERA_SOURCE_DIR) + "/docs/isa.md";
  std::string generated = isa_reference_markdown();
  const char* update = std::getenv("UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << generated;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path << " is missing; run with UPDATE_GOLDEN=1";
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), generated) << "docs/isa.md is stale; run the isa tests with UPDATE_GOLDEN=1";
}

TEST(IsaDoc, EveryMnemonicIsDocumented) {
  std::string doc = isa_reference_markdown();
  for (const OpInfo& info : kOpTable) {
    EXPECT_NE(doc.find(fmt::format("| `{}` |", info.mnemonic)), std::string::npos) << info.mnemonic;
  }
}

}  // namespace
}  // namespace tessera::isa
