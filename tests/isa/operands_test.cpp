#include "isa/operands.h"

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

namespace tessera::isa {
namespace {

TEST(Operands, SignaturesParseForEveryOpcode) {
  for (const OpInfo& info : kOpTable) {
    size_t commas = std::count(info.operands.begin(), info.operands.end(), ',');
    EXPECT_EQ(signature(info.op).size(), info.operands.empty() ? 0 : commas + 1) << info.mnemonic;
  }
  auto sig = signature(Opcode::VSTS);  // vA,[sB+imm],sC
  ASSERT_EQ(sig.size(), 3u);
  EXPECT_EQ(sig[0].kind, OperandKind::VReg);
  EXPECT_EQ(sig[0].field, Field::A);
  EXPECT_EQ(sig[1].kind, OperandKind::Mem);
  EXPECT_EQ(sig[1].field, Field::B);
  EXPECT_EQ(sig[2].field, Field::C);
  EXPECT_TRUE(uses_imm(Opcode::VSTS));
  EXPECT_FALSE(uses_field(Opcode::VSTS, Field::D));
  EXPECT_EQ(signature(Opcode::DMAHV)[3].kind, OperandKind::Flag);
  EXPECT_EQ(signature(Opcode::DMAHV)[3].field, Field::C);
}

TEST(Operands, DestinationsAreFieldDExceptForDmaAndLoopWritesItsCounter) {
  Instr add{Opcode::SADD, 1, 2, 3, 0, 0};
  ASSERT_EQ(written_registers(add).count, 1);
  EXPECT_EQ(written_registers(add).reg[0], (RegRef{RegFile::Scalar, 1}));
  EXPECT_EQ(read_registers(add).count, 2);
  Instr dma{Opcode::DMAHV, 1, 2, 3, 4, 0};
  EXPECT_EQ(written_registers(dma).count, 0);
  EXPECT_EQ(read_registers(dma).count, 3);
  Instr loop{Opcode::LOOP, 0, 5, 0, 0, 3};
  ASSERT_EQ(written_registers(loop).count, 1);
  EXPECT_EQ(written_registers(loop).reg[0], (RegRef{RegFile::Scalar, 5}));
  Instr cmp{Opcode::VCMPLTF, 2, 1, 1, 0, 0};
  EXPECT_EQ(written_registers(cmp).reg[0], (RegRef{RegFile::Mask, 2}));
  EXPECT_EQ(read_registers(cmp).count, 1);  // v1 read twice counts once
  Instr st{Opcode::VSTM, 0, 2, 6, 3, 16};
  EXPECT_EQ(written_registers(st).count, 0);
  EXPECT_EQ(read_registers(st).count, 3);
}

// Regression: iterating the result of written_registers() directly once dangled (found by
// fuzz_assembler under ASan).
TEST(Operands, RegisterListsCanBeIteratedAsTemporaries) {
  std::vector<RegRef> seen;
  for (RegRef r : written_registers(Instr{Opcode::SADD, 7, 1, 2, 0, 0})) seen.push_back(r);
  for (RegRef r : read_registers(Instr{Opcode::SADD, 7, 1, 2, 0, 0}).view()) seen.push_back(r);
  EXPECT_EQ(seen, (std::vector<RegRef>{
                      {RegFile::Scalar, 7}, {RegFile::Scalar, 1}, {RegFile::Scalar, 2}}));
}

}  // namespace
}  // namespace tessera::isa
