#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "isa/assembler.h"
#include "isa/disassembler.h"
#include "isa/random_bundle.h"

namespace tessera::isa {
namespace {

namespace fs = std::filesystem;

void expect_same_program(const Program& a, const Program& b, const std::string& what) {
  EXPECT_EQ(a.without_debug(), b.without_debug()) << what;
  EXPECT_EQ(write_image(a.without_debug()), write_image(b.without_debug())) << what;
}

TEST(RoundTrip, AssembleDisassembleAssembleIsTheIdentityOnEveryExample) {
  std::vector<fs::path> files;
  fs::path dir = fs::path(TESSERA_SOURCE_DIR) / "examples";
  if (fs::exists(dir)) {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() == ".s") files.push_back(e.path());
    }
  }
  if (files.empty()) GTEST_SKIP() << "no examples/*.s yet";
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    Program p = assemble_file(f.string());
    std::string text = disassemble(p);
    Program q = assemble(text, f.string() + " (disassembled)");
    expect_same_program(p, q, f.string());
  }
}

TEST(RoundTrip, DisassembledRandomBundlesReassembleBitIdentically) {
  RandomBundleGenerator gen(2024, {.max_target = 5000});
  for (int i = 0; i < 2000; ++i) {
    Bundle b = gen.next();
    std::string text = disassemble(b);
    Program p = assemble(text, "bundle.s");
    ASSERT_EQ(p.code.size(), 1u) << text;
    EXPECT_EQ(p.code[0], b) << text;
  }
}

TEST(RoundTrip, RandomProgramsWithLabelsAndDataSurviveDisassembly) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Program p = random_program(seed, 30);
    expect_same_program(p, assemble(disassemble(p), "random.s"), "seed " + std::to_string(seed));
  }
}

TEST(RoundTrip, DenseBundlesWithEverySlotFilledSurvive) {
  RandomBundleGenerator gen(99, {.max_target = 10, .fill_percent = 100});
  for (int i = 0; i < 300; ++i) {
    Bundle b = gen.next();
    EXPECT_EQ(assemble(disassemble(b)).code.at(0), b) << disassemble(b);
  }
}

TEST(Disassembler, CanonicalTextOfOpsAndBundles) {
  Bundle b;
  b[Slot::S0] = Instr{Opcode::SLD, 1, 3, 0, 0, -4};
  b[Slot::S1] = Instr{Opcode::SMFSR, 2, 0, 0, 0, 2};
  b[Slot::VST] = Instr{Opcode::VSTM, 0, 2, 6, 3, 16};
  b[Slot::MISC] = Instr{Opcode::DMAHV, 1, 2, 3, 7, 0};
  EXPECT_EQ(disassemble(b),
            "sld s1, [s3-4] ;; smfsr s2, %pid ;; vst.m v2, [s6+16], m3 ;; dma.hv s1, s2, s3, 7");
  EXPECT_EQ(disassemble(Bundle{}), "nop");
  EXPECT_EQ(disassemble(Instr{Opcode::SLD, 1, 3, 0, 0, 0}), "sld s1, [s3]");
  EXPECT_EQ(disassemble(Instr{Opcode::JMP, 0, 0, 0, 0, 12}), "jmp 12");
  EXPECT_EQ(disassemble(Instr{Opcode::SLI, 1, 0, 0, 0, INT32_MIN}), "sli s1, -2147483648");
}

TEST(Disassembler, WholeProgramsNameBranchTargetsAndPrintData) {
  Program p = assemble(".smem 4\n.word 1, -1\ntop: sli s1, 3\nloop s1, top ;; jmp end\nend:\n");
  EXPECT_EQ(disassemble(p),
            "// 2 bundles, 1 data segments\n"
            ".smem 4\n"
            "  .word 0x00000001, 0xffffffff\n"
            "L0:     sli s1, 3\n"
            "        loop s1, L0 ;; jmp L2\n"
            "L2:\n");
}

}  // namespace
}  // namespace tessera::isa
