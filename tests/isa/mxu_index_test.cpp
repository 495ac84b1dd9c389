// The MXU index operand of the matrix ops: `mxuN` in field c, optional (MXU 0), range-checked
// against the assembler's MXU count, and round-tripped by the disassembler.
#include <gtest/gtest.h>

#include "common/error.h"
#include "isa/assembler.h"
#include "isa/disassembler.h"
#include "isa/encoding.h"
#include "isa/operands.h"
#include "isa/random_bundle.h"

namespace tessera::isa {
namespace {

std::string error_of(std::string_view text, int mxus) {
  try {
    AsmOptions o;
    o.mxus = mxus;
    assemble(text, "t.s", o);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(MxuIndex, EveryMatrixOpTakesItAsItsLastOperandInFieldC) {
  for (Opcode op : {Opcode::MLW, Opcode::MFLIP, Opcode::MMUL, Opcode::MMULST, Opcode::MMULACC,
                    Opcode::MMULOUT, Opcode::MPOP}) {
    const auto sig = signature(op);
    ASSERT_FALSE(sig.empty()) << op_info(op).mnemonic;
    EXPECT_EQ(sig.back().kind, OperandKind::Mxu) << op_info(op).mnemonic;
    EXPECT_EQ(sig.back().field, Field::C) << op_info(op).mnemonic;
  }
}

TEST(MxuIndex, AssemblesIntoFieldCAndOmittedMeansMxu0) {
  const Program p = assemble(
      "mlw v1, mxu1 ;; mmul.st v2, s3, mxu0\n"
      "mflip mxu1 ;; mpop v4\n"
      "mflip ;; mmul.acc.out v5, s6, mxu7\n");
  ASSERT_EQ(p.code.size(), 3u);
  EXPECT_EQ(p.code[0][Slot::M0], (Instr{Opcode::MLW, 0, 1, 0, 1, 0}));
  EXPECT_EQ(p.code[0][Slot::M1], (Instr{Opcode::MMULST, 0, 2, 3, 0, 0}));
  EXPECT_EQ(p.code[1][Slot::M0], (Instr{Opcode::MFLIP, 0, 0, 0, 1, 0}));
  EXPECT_EQ(p.code[1][Slot::M1], (Instr{Opcode::MPOP, 4, 0, 0, 0, 0}));
  EXPECT_EQ(p.code[2][Slot::M0], (Instr{Opcode::MFLIP, 0, 0, 0, 0, 0}));
  EXPECT_EQ(p.code[2][Slot::M1], (Instr{Opcode::MMULOUT, 0, 5, 6, 7, 0}));
}

TEST(MxuIndex, DisassemblyLeavesOutMxu0AndReassemblesBitIdentically) {
  const Program p = assemble("mlw v1, mxu1 ;; mmul.st v2, s3, mxu0\nmflip mxu1 ;; mpop v4, mxu2\n");
  EXPECT_EQ(disassemble(p.code[0]), "mlw v1, mxu1 ;; mmul.st v2, s3");
  EXPECT_EQ(disassemble(p.code[1]), "mflip mxu1 ;; mpop v4, mxu2");
  for (const Bundle& b : p.code) EXPECT_EQ(assemble(disassemble(b)).code.at(0), b);
  // and through the binary encoding
  for (const Bundle& b : p.code)
    for (int s = 0; s < kNumSlots; ++s)
      EXPECT_EQ(decode(encode(b.slot[s]), static_cast<Slot>(s)), b.slot[s]);
}

TEST(MxuIndex, RandomBundlesWithSeveralMxusRoundTrip) {
  RandomBundleGenerator gen(7, {.mxus = 4, .max_target = 10, .fill_percent = 100});
  int nonzero = 0;
  for (int i = 0; i < 500; ++i) {
    const Bundle b = gen.next();
    for (const Instr& in : b.slot)
      if (op_info(in.op).unit == Unit::Mxu && in.c != 0) ++nonzero;
    AsmOptions o;
    o.mxus = 4;
    EXPECT_EQ(assemble(disassemble(b), "b.s", o).code.at(0), b) << disassemble(b);
  }
  EXPECT_GT(nonzero, 0);
}

TEST(MxuIndex, IndexAtOrBeyondTheCountIsAnErrorAtItsColumn_bad) {
  EXPECT_EQ(error_of("nop\nmlw v1, mxu1\n", 1),
            "t.s:2:9: expected an MXU index (mxu0..mxu0: the core has 1 MXU), got 'mxu1'");
  EXPECT_EQ(error_of("mflip mxu2", 2),
            "t.s:1:7: expected an MXU index (mxu0..mxu1: the core has 2 MXUs), got 'mxu2'");
  EXPECT_EQ(error_of("mpop v1, v2", 2),
            "t.s:1:10: expected an MXU index (mxu0..mxu1: the core has 2 MXUs), got 'v2'");
  EXPECT_EQ(error_of("mpop v1, mxu01", 2),
            "t.s:1:10: expected an MXU index (mxu0..mxu1: the core has 2 MXUs), got 'mxu01'");
}

TEST(MxuIndex, NonZeroFieldCOfAnOpWithoutAnIndexIsStillInvalid_bad) {
  Instr in{Opcode::VADDF, 1, 2, 3, 1, 0};
  EXPECT_THROW(decode(encode(in), Slot::V0), Error);
}

}  // namespace
}  // namespace tessera::isa
