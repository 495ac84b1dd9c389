#include "isa/adam_isa.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace tessera::isa {
namespace {

TEST(AdamIsa, EveryInstructionRoundTripsThroughDisassembly) {
  std::string text;
  for (const AdamOpInfo& i : kAdamOpTable) {
    std::string line(i.mnemonic);
    if (i.operands == "imm") line += " 4096";
    if (i.operands == "a") line += " a5";
    if (i.operands == "a,imm") line += " a7, 0xffffffff";
    if (i.operands == "a,b") line += " a1, a6";
    if (i.operands == "label") line += " 3";
    text += line + "\n";
  }
  const std::vector<uint64_t> words = adam_assemble(text);
  ASSERT_EQ(words.size(), kAdamOpTable.size());
  const std::string dis = adam_disassemble(words);
  EXPECT_EQ(adam_assemble(dis), words);
  for (size_t k = 0; k < words.size(); ++k)
    EXPECT_EQ(adam_encode(adam_decode(words[k], 0)), words[k]);
  EXPECT_EQ(adam_decode(words[5], 5).op, kAdamOpTable[5].op);
}

TEST(AdamIsa, LabelsResolveToInstructionIndices) {
  const auto w = adam_assemble("iio 3\nloop: mest // comment\n  bnext loop\n");
  EXPECT_EQ(adam_decode(w[2], 2).imm, 1u);
  EXPECT_EQ(adam_disassemble(w), "iio 3\nmest\nbnext 1\n");
}

TEST(AdamIsa, InvalidWordsAreRejected_bad) {
  EXPECT_THROW(adam_decode(0, 0), Error);
  try {
    adam_decode(0, 7);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "adam instruction 7: invalid encoding 0x0000000000000000: unknown opcode 0");
  }
  const uint64_t mest = adam_assemble("mest")[0];
  EXPECT_THROW(adam_decode(mest | (uint64_t{1} << 32), 0), Error);  // imm on an op without one
  EXPECT_THROW(adam_decode(mest | (uint64_t{1} << 20), 0), Error);  // reserved bits
  const uint64_t dbio = adam_assemble("dbio a1")[0];
  EXPECT_THROW(adam_decode(dbio | (uint64_t{9} << 8), 0), Error);  // register a9
}

TEST(AdamIsa, AssemblerErrorsNameLineAndReason_bad) {
  const auto msg = [](const char* text) {
    try {
      adam_assemble(text, "p.adam");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(msg("iio 2\nfrob a1\n"), "p.adam:2: unknown adam instruction 'frob'");
  EXPECT_EQ(msg("dio a1\n"), "p.adam:1: 'dio' takes 2 operand(s) (a,b), got 1");
  EXPECT_EQ(msg("dbio a8\n"), "p.adam:1: expected an address register a0..a7, got 'a8'");
  EXPECT_EQ(msg("bnext nowhere\n"), "p.adam:1: unknown label 'nowhere'");
  EXPECT_EQ(msg("iio 0x1ffffffff\n"),
            "p.adam:1: expected an unsigned 32-bit number, got '0x1ffffffff'");
  EXPECT_EQ(msg("x: halt\nx: halt\n"), "p.adam:2: label 'x' defined twice");
}

}  // namespace
}  // namespace tessera::isa
