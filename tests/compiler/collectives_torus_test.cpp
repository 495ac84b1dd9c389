// The torus all-reduce's generator: one image whose size depends on the number of dimensions, not
// on their sizes; the per-processor programs differ only in how the index is obtained; supersteps;
// names; bad specs with exact errors.
#include <gtest/gtest.h>

#include "compiler/collectives.h"
#include "support/error_of.h"

namespace tessera::compiler {
namespace {

CollectiveSpec torus(std::vector<int> grid) {
  CollectiveSpec spec;
  spec.algorithm = CollectiveAlgorithm::kTorus;
  spec.processors = 1;
  for (int d : grid) spec.processors *= d;
  spec.grid = std::move(grid);
  spec.words = 1 << 20;
  spec.rings = 2;
  spec.directions = 2;
  return spec;
}

TEST(TorusGenerator, OneImageHasTheSameSizeForEveryGridOfTheSameShape) {
  const size_t bundles = collective_program(torus({2, 2, 2})).code.size();
  for (int x : {3, 16, 32})
    EXPECT_EQ(collective_program(torus({2, x, x})).code.size(), bundles) << x;
  EXPECT_EQ(collective_program(torus({2, 1024, 16})).code.size(), bundles);
}

TEST(TorusGenerator, PerProcessorProgramsCarryTheirIndexAsAConstant) {
  const CollectiveSpec spec = torus({2, 3, 4});
  const isa::Program one = collective_program(spec);
  EXPECT_EQ(one.code[0].slot[0].op, isa::Opcode::SMFSR);
  for (int p : {0, 5, 23}) {
    const isa::Program mine = collective_program_for(spec, p);
    EXPECT_EQ(mine.index, static_cast<uint32_t>(p));
    ASSERT_EQ(mine.code.size(), one.code.size());
    EXPECT_EQ(mine.code[0].slot[0].op, isa::Opcode::SLI);
    EXPECT_EQ(mine.code[0].slot[0].imm, p);
    for (size_t b = 1; b < one.code.size(); ++b)
      EXPECT_EQ(mine.code[b], one.code[b]) << "bundle " << b;
  }
}

TEST(TorusGenerator, SuperstepsAreTwiceTheSumOfTheDimensionsLessOne) {
  EXPECT_EQ(collective_supersteps(torus({2, 4, 4})), 14);
  EXPECT_EQ(collective_supersteps(torus({1, 32, 32})), 124);
  EXPECT_EQ(collective_supersteps(torus({1, 1})), 0);
  CollectiveSpec ring;
  ring.processors = 32;
  EXPECT_EQ(collective_supersteps(ring), 62);
  ring.kind = CollectiveKind::kAllGather;
  EXPECT_EQ(collective_supersteps(ring), 31);
  ring.kind = CollectiveKind::kBroadcast;
  EXPECT_EQ(collective_supersteps(ring), 32);
}

TEST(TorusGenerator, OneProcessorOnlyHalts) {
  const isa::Program p = collective_program(torus({1, 1, 1}));
  for (const isa::Bundle& b : p.code)
    for (const isa::Instr& in : b.slot) {
      EXPECT_NE(in.op, isa::Opcode::SYNC);
      EXPECT_NE(in.op, isa::Opcode::XSENDADD);
    }
  EXPECT_EQ(p.code.back().slot[0].op, isa::Opcode::HALT);
}

TEST(TorusGenerator, AlgorithmNames) {
  EXPECT_EQ(algorithm_from_name("ring", "--algorithm"), CollectiveAlgorithm::kRing);
  EXPECT_EQ(algorithm_from_name("torus", "--algorithm"), CollectiveAlgorithm::kTorus);
  EXPECT_STREQ(algorithm_name(CollectiveAlgorithm::kTorus), "torus");
  EXPECT_STREQ(algorithm_name(CollectiveAlgorithm::kRing), "ring");
}

TEST(TorusGenerator, bad_specs) {
  CollectiveSpec spec = torus({2, 4, 4});
  spec.processors = 16;
  EXPECT_EQ(testing::error_of([&] { collective_asm(spec); }),
            "collective.grid: 2 x 4 x 4 = 32 processors, the spec has 16");
  spec.grid = {4, 0, 4};
  EXPECT_EQ(testing::error_of([&] { collective_asm(spec); }),
            "collective.grid: dimension 1 is 0: must be at least 1");
  spec = torus({4, 4});
  spec.kind = CollectiveKind::kAllGather;
  EXPECT_EQ(
      testing::error_of([&] { collective_asm(spec); }),
      "collective.algorithm: torus is an all-reduce algorithm; all-gather and broadcast use ring");
  spec = torus({2, 200, 200});
  spec.processors = 16;
  EXPECT_EQ(testing::error_of([&] { collective_asm(spec); }),
            "collective.grid: more than 32768 processors, the spec has 16");
  spec = torus({});
  spec.processors = 40000;
  EXPECT_EQ(testing::error_of([&] { collective_asm(spec); }),
            "collective.processors: 40000: the torus all-reduce indexes at most 32768");
  CollectiveSpec ring;
  ring.processors = 4;
  ring.grid = {2, 2};
  EXPECT_EQ(testing::error_of([&] { collective_asm(ring); }),
            "collective.grid: only the torus algorithm takes a grid");
  EXPECT_EQ(testing::error_of([&] { algorithm_from_name("tree", "--algorithm"); }),
            "--algorithm: 'tree': expected ring or torus");
  const std::vector<std::vector<uint32_t>> two(2, std::vector<uint32_t>(3));
  spec = torus({3});
  spec.words = 3;
  EXPECT_EQ(testing::error_of([&] { collective_reference(spec, two); }),
            "collective_reference: one input per processor");
}

}  // namespace
}  // namespace tessera::compiler
