#include "isa/assembler.h"

#include <bit>
#include <fstream>

#include <gtest/gtest.h>

#include "common/error.h"
#include "support/bad_paths.h"
#include "support/error_of.h"

namespace tessera::isa {
namespace {

using testing::error_of;

Instr I(Opcode op, uint8_t d = 0, uint8_t a = 0, uint8_t b = 0, uint8_t c = 0, int32_t imm = 0) {
  return Instr{op, d, a, b, c, imm};
}

constexpr const char* kTeamSample = R"(// comment to end of line
.const N 128            // named constant: usable wherever an immediate is
.smem 16                // following .word/.float go to scalar memory from word 16
.word 1, 2, 0x10, -3
.hbm 0x1000             // following data go to HBM from word address 0x1000
.float 1.0, -2.5, 3e-4
.vmem 64                // following data go to vector memory from ROW 64 (word 64*lanes)
top:                    // a label: alone on a line or before a bundle on the same line
  sli s1, 0 ;; sli s2, N ;; vld v0, [s3+0]      // one bundle per line, ops separated by ;;
  mmul.acc v1, s4 ;; mpop v2
  loop s5, top
  halt
)";

TEST(Assembler, TeamSampleAssemblesToTheExpectedBundlesAndData) {
  Program p = assemble(kTeamSample, "sample.s");
  ASSERT_EQ(p.code.size(), 4u);
  EXPECT_EQ(p.code[0][Slot::S0], I(Opcode::SLI, 1));
  EXPECT_EQ(p.code[0][Slot::S1], I(Opcode::SLI, 2, 0, 0, 0, 128));
  EXPECT_EQ(p.code[0][Slot::VLD], I(Opcode::VLD, 0, 3));
  EXPECT_EQ(p.code[1][Slot::M0], I(Opcode::MMULACC, 0, 1, 4));
  EXPECT_EQ(p.code[1][Slot::M1], I(Opcode::MPOP, 2));
  EXPECT_EQ(p.code[2][Slot::S0], I(Opcode::LOOP, 0, 5, 0, 0, 0));
  EXPECT_EQ(p.code[3][Slot::S0], I(Opcode::HALT));
  ASSERT_EQ(p.data.size(), 2u);  // the empty .vmem segment is dropped
  EXPECT_EQ(p.data[0], (DataSegment{Space::Smem, 16, {1, 2, 0x10, 0xfffffffdu}}));
  EXPECT_EQ(p.data[1].space, Space::Hbm);
  EXPECT_EQ(p.data[1].address, 0x1000u);
  EXPECT_EQ(p.data[1].words,
            (std::vector<uint32_t>{std::bit_cast<uint32_t>(1.0f), std::bit_cast<uint32_t>(-2.5f),
                                   std::bit_cast<uint32_t>(3e-4f)}));
  EXPECT_EQ(p.index, 0u);
  EXPECT_EQ(p.debug.source, "sample.s");
  EXPECT_EQ(p.debug.lines, (std::vector<uint32_t>{9, 10, 11, 12}));
  EXPECT_EQ(p.debug.symbols, (std::vector<Symbol>{{"top", 0}}));
}

TEST(Assembler, LabelsMayBeUsedBeforeTheirDefinition) {
  Program p = assemble("jmp end\nnop\nmiddle: end: halt\n");
  EXPECT_EQ(p.code[0][Slot::S0], I(Opcode::JMP, 0, 0, 0, 0, 2));
  EXPECT_EQ(p.code[1], Bundle{});
  EXPECT_EQ(p.debug.symbols, (std::vector<Symbol>{{"middle", 2}, {"end", 2}}));
}

TEST(Assembler, ImmediateFormsGiveTheirBitPatterns) {
  Program p = assemble(
      ".const K -7\n.const F 1.5f\n"
      "sli s1, 0x10 ;; sli s2, -1\nsli s1, 0xffffffff ;; sli s2, -2147483648\n"
      "sli s1, 1.5f ;; sli s2, -0.0f\nsli s1, K ;; sli s2, -K\nsli s1, F ;; sli s2, +3\n");
  auto imm = [&](int b, Slot s) { return p.code[b][s].imm; };
  EXPECT_EQ(imm(0, Slot::S0), 16);
  EXPECT_EQ(imm(0, Slot::S1), -1);
  EXPECT_EQ(imm(1, Slot::S0), -1);
  EXPECT_EQ(imm(1, Slot::S1), INT32_MIN);
  EXPECT_EQ(imm(2, Slot::S0), std::bit_cast<int32_t>(1.5f));
  EXPECT_EQ(imm(2, Slot::S1), std::bit_cast<int32_t>(-0.0f));
  EXPECT_EQ(imm(3, Slot::S0), -7);
  EXPECT_EQ(imm(3, Slot::S1), 7);
  EXPECT_EQ(imm(4, Slot::S0), std::bit_cast<int32_t>(1.5f));
  EXPECT_EQ(imm(4, Slot::S1), 3);
}

TEST(Assembler, MemorySpecialAndFlagOperandsFillTheirFields) {
  Program p = assemble(
      ".const N 8\nsld s1, [s3] ;; sst s2, [s4-4]\nvld v1, [s5+N] ;; vst.m v2, [s6+16], m3\n"
      "smfsr s1, %pid ;; smtsr %cycle_hi, s2\ndma.hv s1, s2, s3, 2\nwait 2, 1\n");
  EXPECT_EQ(p.code[0][Slot::S0], I(Opcode::SLD, 1, 3));
  EXPECT_EQ(p.code[0][Slot::S1], I(Opcode::SST, 0, 4, 2, 0, -4));
  EXPECT_EQ(p.code[1][Slot::VLD], I(Opcode::VLD, 1, 5, 0, 0, 8));
  EXPECT_EQ(p.code[1][Slot::VST], I(Opcode::VSTM, 0, 2, 6, 3, 16));
  EXPECT_EQ(p.code[2][Slot::S0], I(Opcode::SMFSR, 1, 0, 0, 0, 2));
  EXPECT_EQ(p.code[2][Slot::S1], I(Opcode::SMTSR, 0, 2, 0, 0, 1));
  EXPECT_EQ(p.code[3][Slot::MISC], I(Opcode::DMAHV, 1, 2, 3, 2));
  EXPECT_EQ(p.code[4][Slot::MISC], I(Opcode::WAIT, 0, 2, 0, 0, 1));
}

TEST(Assembler, OpsFillTheSlotsOfTheirClassInOrderOfAppearance) {
  Program p =
      assemble("xpush v1 ;; vadd.f32 v1, v2, v3 ;; rsum v4 ;; vmov v5, v6 ;; sli s1, 1 ;; nop\n");
  const Bundle& b = p.code[0];
  EXPECT_EQ(b[Slot::X0].op, Opcode::XPUSH);
  EXPECT_EQ(b[Slot::X1].op, Opcode::RSUM);
  EXPECT_EQ(b[Slot::V0].op, Opcode::VADDF);
  EXPECT_EQ(b[Slot::V1].op, Opcode::VMOV);
  EXPECT_EQ(b[Slot::S0].op, Opcode::SLI);
  EXPECT_EQ(b[Slot::S1].op, Opcode::NOP);
}

TEST(Assembler, DmaAddressRegistersAreNotWrites) {
  EXPECT_NO_THROW(assemble("dma.hv s1, s2, s3, 0 ;; sli s1, 0 ;; vmov v1, v2 ;; mpop v3\n"));
}

TEST(Assembler, RegisterCountsComeFromTheOptions) {
  AsmOptions big;
  big.scalar_regs = 64;
  EXPECT_EQ(assemble("sli s63, 1\n", "x.s", big).code[0][Slot::S0].d, 63);
  EXPECT_THROW(assemble("sli s63, 1\n"), Error);
}

TEST(Assembler, CrLfLineEndingsAndMissingFinalNewlineAreAccepted) {
  Program p = assemble("sli s1, 1\r\nhalt");
  ASSERT_EQ(p.code.size(), 2u);
  EXPECT_EQ(p.code[1][Slot::S0].op, Opcode::HALT);
}

TEST(Assembler, WithoutDebugInfoTheProgramHasNone) {
  AsmOptions o;
  o.debug_info = false;
  EXPECT_TRUE(assemble("a: halt\n", "x.s", o).debug.empty());
}

struct BadCase {
  const char* source;
  const char* message;
};

// Each case: the exact error (where: why) for the first error in the source.
const BadCase kBadCases[] = {
    {"vadd.f32 s3, v1, v2", "t.s:1:10: expected a vector register (v0..v31), got 's3'"},
    {"vadd.f64 v1, v2, v3", "t.s:1:1: unknown mnemonic 'vadd.f64'"},
    {"vadd.f32 v1, v2, v3 ;; vadd.f32 v4, v5, v6 ;; vmul.f32 v7, v8, v9",
     "t.s:1:47: too many vector-alu ops in one bundle (at most 2)"},
    {"vld v0, [s3+0] ;; vld v1, [s4]",
     "t.s:1:19: too many vector-load ops in one bundle (at most 1)"},
    {"sli s4, 1 ;; sadd s4, s1, s2", "t.s:1:19: s4 is written twice in one bundle"},
    {"top: loop s5, top ;; sli s5, 1", "t.s:1:26: s5 is written twice in one bundle"},
    {"vcmpeq.f32 m1, v1, v2 ;; mand m1, m2, m3", "t.s:1:31: m1 is written twice in one bundle"},
    {"top:\n  jmp lop", "t.s:2:7: undefined label 'lop'"},
    {"sli s1, 4294967296", "t.s:1:9: immediate 4294967296 does not fit in 32 bits"},
    {"sli s1, -2147483649", "t.s:1:9: immediate -2147483649 does not fit in 32 bits"},
    {"sli s1, 99999999999999999999999",
     "t.s:1:9: immediate 99999999999999999999999 does not fit in 32 bits"},
    {"wait 70, 1", "t.s:1:6: flag id 70 is out of range 0..63"},
    {"dma.hv s1, s2, s3, x", "t.s:1:20: undefined constant 'x'"},
    {"sadd s1, s2", "t.s:1:12: 'sadd' takes 3 operands (sD,sA,sB), got 2"},
    {"sadd s1, s2, s3, s4",
     "t.s:1:16: 'sadd' takes 3 operands (sD,sA,sB); expected ';;' or end of line, got ','"},
    {"sli s1, 1 halt",
     "t.s:1:11: 'sli' takes 2 operands (sD,imm); expected ';;' or end of line, got 'halt'"},
    {"sadd s1 s2, s3", "t.s:1:9: expected ',' between operands, got 's2'"},
    {"halt s1", "t.s:1:6: 'halt' takes no operands, got 's1'"},
    {"sli s1, N", "t.s:1:9: undefined constant 'N'"},
    {".const N 1\n.const N 2", "t.s:2:8: constant 'N' is already defined on line 1"},
    {".const 5 6", "t.s:1:8: expected a constant name, got '5'"},
    {".const N 1 2", "t.s:1:12: expected end of line after '.const', got '2'"},
    {"a: halt\na: halt", "t.s:2:1: label 'a' is already defined on line 1"},
    {"a: a: halt", "t.s:1:4: label 'a' is already defined on line 1"},
    {".word 1", "t.s:1:1: '.word' needs a preceding .smem, .hbm or .vmem directive"},
    {".foo 1",
     "t.s:1:1: unknown directive '.foo' (expected .const, .smem, .hbm, .vmem, .word or .float)"},
    {".smem -1", "t.s:1:7: address -1 is out of range 0..9223372036854775807"},
    {".smem 0\n.float 1e50", "t.s:2:8: float literal '1e50' is out of range for fp32"},
    {".smem 0\n.float 0x10",
     "t.s:2:8: expected a float literal (like 1.0, -2.5, 3e-4, inf, nan), got '0x10'"},
    {".smem 0\n.word 1,",
     "t.s:2:9: expected an immediate (a number, a float literal like 1.5f, or a .const name), got "
     "end of line"},
    {"sld s1, [s2+4", "t.s:1:14: expected ']' to close the memory operand, got end of line"},
    {"sld s1, [s2*4]", "t.s:1:12: unexpected character '*'"},
    {"sld s1, [s2 4]", "t.s:1:13: expected '+', '-' or ']' in a memory operand, got '4'"},
    {"sld s1, s2", "t.s:1:9: expected a memory operand like [s3+16], got 's2'"},
    {"smfsr s1, %foo",
     "t.s:1:11: expected a special register (%cycle_lo, %cycle_hi, %pid, %nproc), got '%foo'"},
    {"sli s1, 1.5", "t.s:1:9: a float immediate needs an 'f' suffix (1.5f), got '1.5'"},
    {"sli s1, 12abc", "t.s:1:9: malformed number '12abc'"},
    {"sli s1, 1 ; halt", "t.s:1:11: expected ';;' between ops, got a single ';'"},
    {"sli s1, 1 @", "t.s:1:11: unexpected character '@'"},
    {"sadd s1, s2, s99", "t.s:1:14: expected a scalar register (s0..s31), got 's99'"},
    {"smov s1, s01", "t.s:1:10: expected a scalar register (s0..s31), got 's01'"},
    {"mand m8, m1, m2", "t.s:1:6: expected a mask register (m0..m7), got 'm8'"},
    {"sli s1, 1 ;;", "t.s:1:13: expected a mnemonic, got end of line"},
    {", halt", "t.s:1:1: expected a mnemonic, got ','"},
    {"jmp -1", "t.s:1:5: expected a label or a bundle index, got '-'"},
    {"jmp 2147483648", "t.s:1:5: bundle index 2147483648 is out of range 0..2147483647"},
    {"wait 1.5f, 1", "t.s:1:6: expected a flag id (0..63), got '1.5f'"},
    // The first error in source order wins, even over a label defined later.
    {"jmp later\nsadd s1\nlater: halt", "t.s:2:8: 'sadd' takes 3 operands (sD,sA,sB), got 1"},
    {"jmp end\nend: halt @", "t.s:2:11: unexpected character '@'"},
    {"sli s1, x\n.const x 1", "t.s:1:9: undefined constant 'x'"},
};

TEST(Assembler, BadSourcesGiveTheExactFirstError_bad) {
  for (const BadCase& c : kBadCases) {
    try {
      assemble(c.source, "t.s");
      ADD_FAILURE() << "no error for: " << c.source;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), c.message) << "source: " << c.source;
    }
  }
}

// A whole program (a file for `asm`, `run`, `disasm`) must be able to run: docs/assembly.md.
std::string whole_program_error(const std::string& source) {
  AsmOptions o;
  o.whole_program = true;
  try {
    assemble(source, "p.s", o);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Assembler, WholeProgramsThatCannotRunAreRefused_bad) {
  EXPECT_EQ(whole_program_error(""),
            "p.s:1:1: the program has no bundles (a program ends with 'halt')");
  EXPECT_EQ(whole_program_error("// only a comment\n.smem 0\n.word 1\n"),
            "p.s:1:1: the program has no bundles (a program ends with 'halt')");
  EXPECT_EQ(whole_program_error("sli s1, 1\n  sadd s2, s1, s1\n"),
            "p.s:2:3: the program can run past its last bundle (end it with 'halt' or 'jmp')");
  EXPECT_EQ(whole_program_error("top: sli s1, 3\nloop s1, top\n"),
            "p.s:2:1: the program can run past its last bundle (end it with 'halt' or 'jmp')");
  EXPECT_EQ(whole_program_error("jmp 2\nhalt\n"),
            "p.s:1:5: bundle index 2 is past the last bundle (the program has 2 bundles, 0..1)");
  EXPECT_EQ(whole_program_error("beq s0, s0, end\nhalt\nend:\n"),
            "p.s:1:13: label 'end' is past the last bundle (the program has 2 bundles, 0..1)");
}

TEST(Assembler, LongTokensAreQuotedShortened_bad) {
  const std::string digits(5'000'000, '7');
  EXPECT_EQ(error_of([&] { assemble("sli s1, " + digits, "t.s"); }),
            "t.s:1:9: immediate 77777777777777777777777777777777... does not fit in 32 bits");
  EXPECT_EQ(error_of([&] { assemble("sli s1, 1x" + digits, "t.s"); }),
            "t.s:1:9: malformed number '1x777777777777777777777777777777...'");
  EXPECT_EQ(error_of([&] { assemble(std::string(41, 'a'), "t.s"); }),
            "t.s:1:1: unknown mnemonic 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'");
  EXPECT_EQ(error_of([&] { assemble(std::string(40, 'a'), "t.s"); }),
            "t.s:1:1: unknown mnemonic '" + std::string(40, 'a') + "'");
}

TEST(Assembler, WholeProgramsEndingInHaltOrJmpAssemble) {
  EXPECT_EQ(whole_program_error("halt"), "(no error)");
  EXPECT_EQ(whole_program_error("top: sli s1, 1 ;; halt\n"), "(no error)");
  EXPECT_EQ(whole_program_error("top: beq s0, s1, out\njmp top\nout: halt\n"), "(no error)");
  EXPECT_EQ(whole_program_error("out: halt\ntop: jmp top\n"), "(no error)");
  // A fragment (the default) may end anywhere and branch to the bundle after its last.
  EXPECT_NO_THROW(assemble("beq s0, s1, end\nsli s1, 1\nend:\n", "fragment.s"));
}

TEST(Assembler, ProgramFilesAreWholePrograms_bad) {
  const testing::BadPaths bad = testing::bad_paths("assembler");
  const std::string dir = bad.directory;
  auto file_error = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name) << text;
    return testing::error_of([&] { assemble_file(dir + "/" + name); });
  };
  EXPECT_EQ(file_error("empty.s", ""),
            dir + "/empty.s:1:1: the program has no bundles (a program ends with 'halt')");
  EXPECT_EQ(file_error("nohalt.s", "sli s1, 1\n"),
            dir +
                "/nohalt.s:1:1: the program can run past its last bundle (end it with 'halt' or "
                "'jmp')");
  EXPECT_EQ(file_error("ok.s", "sli s1, 1\nhalt\n"), "(no error)");
  try {
    load_program(dir + "/nohalt.s");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), dir +
                                         "/nohalt.s:1:1: the program can run past its last "
                                         "bundle (end it with 'halt' or 'jmp')");
  }
  EXPECT_EQ(testing::error_of([&] { assemble_file(dir); }), dir + ": is a directory, not a file");
  EXPECT_EQ(testing::error_of([&] { load_program(bad.empty); }),
            bad.empty + ":1:1: the program has no bundles (a program ends with 'halt')");
}

TEST(Assembler, MissingFileIsAnErrorNamingIt_bad) {
  try {
    assemble_file("/nonexistent/prog.s");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/prog.s: cannot open file for reading");
  }
}

}  // namespace
}  // namespace tessera::isa
