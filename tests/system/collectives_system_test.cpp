// The generated collectives (compiler/collectives.h) run on the functional system (one image,
// patched per processor) equal the host reference bit for bit: processor counts 1..17, odd and
// uneven vector lengths, rings and directions, sum and max; and the per-processor images agree.
#include <bit>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "compiler/collectives.h"
#include "isa/assembler.h"
#include "system/collective_test_data.h"
#include "system/functional_system.h"
#include "system/small_spec.h"

namespace tessera::system {
namespace {

using collective_test::expect_all_equal;
using collective_test::inputs;
using collective_test::run;
using compiler::CollectiveKind;
using compiler::CollectiveSpec;

TEST(Collectives, AllReduceEqualsTheHostReferenceForEveryProcessorCountUpTo17) {
  for (int n = 1; n <= 17; ++n)
    for (uint32_t words : {1u, 7u, 37u, 2u * static_cast<uint32_t>(n) + 3u}) {
      CollectiveSpec spec;
      spec.processors = n;
      spec.base = 96;
      spec.words = words;
      const auto in = inputs(n, words, static_cast<uint64_t>(n * 100 + words));
      FunctionalSystem sys(small_spec(), BspLayout{n, 1, 0}, compiler::collective_program(spec));
      expect_all_equal(run(sys, spec, in), compiler::collective_reference(spec, in),
                       fmt::format("n {} words {}", n, words));
      EXPECT_EQ(sys.supersteps(), 2 * (n - 1));
    }
}

TEST(Collectives, SplitPhaseAllReduceEqualsTheHostReferenceForEveryProcessorCountUpTo17) {
  for (int n = 1; n <= 17; ++n)
    for (uint32_t words : {7u, 2u * static_cast<uint32_t>(n) + 3u}) {
      CollectiveSpec spec;
      spec.processors = n;
      spec.base = 96;
      spec.words = words;
      spec.directions = 2;
      spec.split_phase = true;
      const auto in = inputs(n, words, static_cast<uint64_t>(n * 100 + words));
      FunctionalSystem sys(small_spec(), BspLayout{n, 1, 0}, compiler::collective_program(spec));
      expect_all_equal(run(sys, spec, in), compiler::collective_reference(spec, in),
                       fmt::format("n {} words {}", n, words));
      EXPECT_EQ(sys.supersteps(), 2 * (n - 1));
    }
}

TEST(Collectives, AllReduceWithRingsDirectionsAndMaxEqualsTheReference) {
  for (int n : {2, 3, 6, 11})
    for (int rings : {1, 3})
      for (int dirs : {1, 2})
        for (core::XCombine op : {core::XCombine::Add, core::XCombine::Max}) {
          CollectiveSpec spec;
          spec.processors = n;
          spec.words = 53;
          spec.rings = rings;
          spec.directions = dirs;
          spec.combine = op;
          const auto in = inputs(n, spec.words, 7);
          FunctionalSystem sys(small_spec(), BspLayout{n, 2 - n % 2, 0},
                               compiler::collective_program(spec));
          expect_all_equal(run(sys, spec, in), compiler::collective_reference(spec, in),
                           fmt::format("n {} rings {} dirs {} max {}", n, rings, dirs,
                                       op == core::XCombine::Max));
        }
}

TEST(Collectives, ReductionOrderIsTheDocumentedRingOrder) {
  // 1e8 + 1 - 1e8 depends on the order: fragment 0 forward = (x0 + x1) + x2 = (1e8 + 1) - 1e8 = 0
  // in fp32, while x0 + (x1 + x2) would be 1.
  CollectiveSpec spec;
  spec.processors = 3;
  spec.words = 3;
  const std::vector<std::vector<uint32_t>> in = {{std::bit_cast<uint32_t>(1e8f), 0, 0},
                                                 {std::bit_cast<uint32_t>(1.0f), 0, 0},
                                                 {std::bit_cast<uint32_t>(-1e8f), 0, 0}};
  const std::vector<uint32_t> want = compiler::collective_reference(spec, in);
  EXPECT_EQ(std::bit_cast<float>(want[0]), (1e8f + 1.0f) + -1e8f);
  FunctionalSystem sys(small_spec(), BspLayout{3, 1, 0}, compiler::collective_program(spec));
  expect_all_equal(run(sys, spec, in), want, "order");
}

TEST(Collectives, AllGatherAndBroadcastEqualTheReference) {
  for (int n : {1, 2, 5, 9, 16})
    for (CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kBroadcast}) {
      CollectiveSpec spec;
      spec.kind = kind;
      spec.processors = n;
      spec.words = 29;
      spec.directions = 2;
      spec.root = n / 2;
      const auto in = inputs(n, spec.words, 3);
      FunctionalSystem sys(small_spec(), BspLayout{n, 1, 0}, compiler::collective_program(spec));
      expect_all_equal(run(sys, spec, in), compiler::collective_reference(spec, in),
                       fmt::format("n {} kind {}", n, static_cast<int>(kind)));
    }
}

TEST(Collectives, PerProcessorImagesGiveTheSameResultsAsTheOneImage) {
  CollectiveSpec spec;
  spec.processors = 7;
  spec.words = 45;
  spec.directions = 2;
  const auto in = inputs(7, spec.words, 11);
  std::vector<isa::Program> each;
  for (int p = 0; p < 7; ++p) each.push_back(compiler::collective_program_for(spec, p));
  FunctionalSystem a(small_spec(), BspLayout{7, 1, 0}, compiler::collective_program(spec));
  FunctionalSystem b(small_spec(), BspLayout{7, 1, 0}, each);
  EXPECT_EQ(run(a, spec, in), run(b, spec, in));
}

// The all-reduce one superstep at a time (collective_step_asm, as the overlapped gradient buckets
// use it: every register recomputed per superstep, compute between xsync and xwait that clobbers
// the collective's registers) equals the host reference, for the one image and per processor.
TEST(Collectives, SelfContainedSuperstepsEqualTheHostReferenceForEveryProcessorCountUpTo17) {
  for (int n = 1; n <= 17; ++n)
    for (int directions : {1, 2}) {
      CollectiveSpec spec;
      spec.processors = n;
      spec.base = 96;
      spec.words = 3u * static_cast<uint32_t>(n) + 5u;
      spec.rings = 2;
      spec.directions = directions;
      ASSERT_EQ(compiler::collective_steps(spec), 2 * (n - 1));
      const auto in = inputs(n, spec.words, static_cast<uint64_t>(n * 10 + directions));
      std::vector<isa::Program> each;
      for (int p = 0; p < n; ++p) each.push_back(collective_test::superstep_program(spec, p));
      for (bool one : {true, false}) {
        FunctionalSystem sys = one ? FunctionalSystem(small_spec(), BspLayout{n, 1, 0},
                                                      collective_test::superstep_program(spec, -1))
                                   : FunctionalSystem(small_spec(), BspLayout{n, 1, 0}, each);
        expect_all_equal(run(sys, spec, in), compiler::collective_reference(spec, in),
                         fmt::format("n {} directions {} one image {}", n, directions, one));
        EXPECT_EQ(sys.supersteps(), 2 * (n - 1));
      }
    }
}

}  // namespace
}  // namespace tessera::system
