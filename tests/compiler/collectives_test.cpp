// The collective generator: one image whose size does not grow with the processor count, the
// per-processor programs that differ from it only in how the index is obtained, uneven splits,
// and bad specs.
#include "compiler/collectives.h"

#include <gtest/gtest.h>

#include "support/error_of.h"

namespace tessera::compiler {
namespace {

TEST(CollectiveGenerator, OneImageHasTheSameSizeForEveryProcessorCount) {
  CollectiveSpec spec;
  spec.words = 1 << 20;
  spec.rings = 2;
  spec.directions = 2;
  spec.processors = 2;
  const size_t bundles = collective_program(spec).code.size();
  for (int n : {1, 3, 16, 255, 1024}) {
    spec.processors = n;
    EXPECT_EQ(collective_program(spec).code.size(), bundles) << n;
  }
}

TEST(CollectiveGenerator, PerProcessorProgramsCarryTheirIndexAsAConstant) {
  CollectiveSpec spec;
  spec.processors = 5;
  spec.words = 100;
  const isa::Program one = collective_program(spec);
  for (int p = 0; p < 5; ++p) {
    const isa::Program mine = collective_program_for(spec, p);
    EXPECT_EQ(mine.index, static_cast<uint32_t>(p));
    ASSERT_EQ(mine.code.size(), one.code.size());
    EXPECT_EQ(mine.code[0].slot[0].op, isa::Opcode::SLI);
    EXPECT_EQ(mine.code[0].slot[0].imm, p);
    EXPECT_EQ(one.code[0].slot[0].op, isa::Opcode::SMFSR);
    for (size_t b = 1; b < one.code.size(); ++b)
      EXPECT_EQ(mine.code[b], one.code[b]) << "bundle " << b;
  }
}

TEST(CollectiveGenerator, SplitRangeCoversTheWholeWithPartsDifferingByAtMostOne) {
  for (uint32_t total : {0u, 1u, 7u, 100u, 1025u})
    for (int parts : {1, 2, 3, 7, 17}) {
      uint32_t at = 0, lo = total, hi = 0;
      for (int i = 0; i < parts; ++i) {
        const auto [b, e] = split_range(total, parts, i);
        EXPECT_EQ(b, at);
        at = e;
        lo = std::min(lo, e - b), hi = std::max(hi, e - b);
      }
      EXPECT_EQ(at, total);
      EXPECT_LE(hi - std::min(lo, hi), 1u);
    }
}

// One processor runs the same code and branches past the exchange: no send, no sync.
TEST(CollectiveGenerator, OneProcessorBranchesPastTheExchange) {
  CollectiveSpec spec;
  spec.words = 9;
  const isa::Program p = collective_program(spec);
  ASSERT_GT(p.code.size(), 4u);
  EXPECT_EQ(p.code[3].slot[0].op, isa::Opcode::BEQ);
  EXPECT_EQ(p.code.back().slot[0].op, isa::Opcode::HALT);
  EXPECT_EQ(p.code[3].slot[0].imm, static_cast<int64_t>(p.code.size()) - 1);
}

TEST(CollectiveGenerator, bad_specs) {
  CollectiveSpec spec;
  spec.processors = 0;
  EXPECT_EQ(testing::error_of([&] { collective_asm(spec); }),
            "collective.processors: 0: need at least 1");
  spec.processors = 4;
  spec.rings = 7;
  EXPECT_EQ(testing::error_of([&] { collective_asm(spec); }), "collective.rings: 7: must be 1..6");
  spec.rings = 1;
  spec.directions = 3;
  EXPECT_EQ(testing::error_of([&] { collective_asm(spec); }),
            "collective.directions: 3: must be 1 or 2");
  spec.directions = 1;
  spec.kind = CollectiveKind::kBroadcast;
  spec.root = 4;
  EXPECT_EQ(testing::error_of([&] { collective_asm(spec); }),
            "collective.root: 4 is not a processor (0..3)");
  spec.root = 0;
  EXPECT_EQ(testing::error_of([&] { collective_asm_for(spec, 4); }),
            "collective: processor 4 outside 0..3");
}

}  // namespace
}  // namespace tessera::compiler
