// The torus (torus-dimension) all-reduce of compiler/collectives.h run on the functional and the
// timed system equals its host reference bit for bit: every grid of 1..3 dimensions for 1..17
// processors (primes are 1-D grids), odd vector lengths, rings, directions, max, split phase; a
// 1-D grid is the ring; the documented nested order; 2(sum d_i - 1) supersteps.
#include <bit>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "compiler/collectives.h"
#include "system/collective_test_data.h"
#include "system/functional_system.h"
#include "system/small_spec.h"
#include "system/system.h"

namespace tessera::system {
namespace {

using collective_test::expect_all_equal;
using collective_test::inputs;
using collective_test::run;
using compiler::CollectiveAlgorithm;
using compiler::CollectiveSpec;

// small_spec() with 4 KiB of vector memory and HBM: hundreds of systems stay cheap to build.
core::CoreSpec tiny() {
  core::CoreSpec s = small_spec();
  s.vmem_bytes = 4 << 10;
  s.hbm_bytes = 4 << 10;
  return s;
}

CollectiveSpec torus(std::vector<int> grid, uint32_t words) {
  CollectiveSpec spec;
  spec.algorithm = CollectiveAlgorithm::kTorus;
  spec.processors = 1;
  for (int d : grid) spec.processors *= d;
  spec.grid = std::move(grid);
  spec.base = 40;
  spec.words = words;
  return spec;
}

// Every ordered factorisation of n into 1, 2 and 3 dimensions (dimensions of 1 included).
std::vector<std::vector<int>> grids_of(int n) {
  std::vector<std::vector<int>> out = {{n}};
  for (int a = 1; a <= n; ++a) {
    if (n % a != 0) continue;
    out.push_back({a, n / a});
    for (int b = 1; b <= n / a; ++b)
      if ((n / a) % b == 0) out.push_back({a, b, n / a / b});
  }
  return out;
}

std::string grid_name(const std::vector<int>& g) {
  std::string s;
  for (int d : g) {
    if (!s.empty()) s += "x";
    s += std::to_string(d);
  }
  return s;
}

int expected_supersteps(const std::vector<int>& g) {
  int s = 0;
  for (int d : g) s += 2 * (d - 1);
  return s;
}

TEST(TorusAllReduce, EqualsTheHostReferenceForEveryGridOf1To17Processors) {
  for (int n = 1; n <= 17; ++n)
    for (const std::vector<int>& g : grids_of(n))
      for (const auto& [words, dirs] :
           {std::pair{7u, 1}, std::pair{2u * static_cast<uint32_t>(n) + 3u, 2}}) {
        CollectiveSpec spec = torus(g, words);
        spec.directions = dirs;
        const auto in = inputs(n, words, static_cast<uint64_t>(n * 100 + words));
        FunctionalSystem sys(tiny(), BspLayout{n, 1, 0}, compiler::collective_program(spec));
        const std::string what =
            fmt::format("grid {} words {} directions {}", grid_name(g), words, dirs);
        expect_all_equal(run(sys, spec, in), compiler::collective_reference(spec, in), what);
        EXPECT_EQ(sys.supersteps(), expected_supersteps(g)) << what;
        EXPECT_EQ(compiler::collective_supersteps(spec), expected_supersteps(g)) << what;
      }
}

TEST(TorusAllReduce, WithRingsMaxAndSplitPhaseEqualsTheReference) {
  for (const std::vector<int>& g :
       std::vector<std::vector<int>>{{2, 3}, {3, 1, 4}, {2, 2, 2}, {5, 3}})
    for (int rings : {1, 3})
      for (core::XCombine op : {core::XCombine::Add, core::XCombine::Max})
        for (bool split : {false, true}) {
          CollectiveSpec spec = torus(g, 101);
          spec.rings = rings;
          spec.directions = 2;
          spec.combine = op;
          spec.split_phase = split;
          const auto in = inputs(spec.processors, spec.words, 5);
          FunctionalSystem sys(tiny(), BspLayout{spec.processors, 1, 0},
                               compiler::collective_program(spec));
          expect_all_equal(run(sys, spec, in), compiler::collective_reference(spec, in),
                           fmt::format("grid {} rings {} max {} split {}", grid_name(g), rings,
                                       op == core::XCombine::Max, split));
        }
}

// One superstep at a time (collective_step_asm, as the overlapped gradient buckets use it: every
// register recomputed per superstep, other code between xsync and xwait clobbering the
// collective's registers), as the one image and per processor, with rings, both directions and
// max: the host reference, in the program's superstep count (every grid of 1..3 dimensions of
// these processor counts).
TEST(TorusAllReduce, SelfContainedSuperstepsEqualTheHostReference) {
  for (int n : {1, 2, 4, 5, 6, 8, 12})
    for (const std::vector<int>& g : grids_of(n))
      for (const auto& [rings, dirs, op] :
           {std::tuple{1, 1, core::XCombine::Add}, std::tuple{2, 2, core::XCombine::Add},
            std::tuple{3, 2, core::XCombine::Max}}) {
        CollectiveSpec spec = torus(g, 3u * static_cast<uint32_t>(n) + 5u);
        spec.rings = rings;
        spec.directions = dirs;
        spec.combine = op;
        const std::string what = fmt::format("grid {} rings {} directions {} max {}", grid_name(g),
                                             rings, dirs, op == core::XCombine::Max);
        ASSERT_EQ(compiler::collective_steps(spec), expected_supersteps(g)) << what;
        std::vector<isa::Program> each;
        for (int p = 0; p < n; ++p) each.push_back(collective_test::superstep_program(spec, p));
        const auto in = inputs(n, spec.words, static_cast<uint64_t>(n * 7 + rings));
        for (bool one : {true, false}) {
          FunctionalSystem sys =
              one ? FunctionalSystem(tiny(), BspLayout{n, 1, 0},
                                     collective_test::superstep_program(spec, -1))
                  : FunctionalSystem(tiny(), BspLayout{n, 1, 0}, each);
          expect_all_equal(run(sys, spec, in), compiler::collective_reference(spec, in),
                           what + fmt::format(" one image {}", one));
          EXPECT_EQ(sys.supersteps(), expected_supersteps(g)) << what;
        }
      }
}

TEST(TorusAllReduce, AOneDimensionalGridIsTheRingBitForBit) {
  for (int n : {1, 2, 5, 7, 13, 17})
    for (int dirs : {1, 2}) {
      CollectiveSpec ring;
      ring.processors = n;
      ring.base = 40;
      ring.words = 3u * static_cast<uint32_t>(n) + 2u;
      ring.directions = dirs;
      ring.rings = 2;
      CollectiveSpec tor = ring;
      tor.algorithm = CollectiveAlgorithm::kTorus;  // empty grid: {n}
      const auto in = inputs(n, ring.words, 9);
      EXPECT_EQ(compiler::collective_reference(tor, in), compiler::collective_reference(ring, in))
          << n;
      FunctionalSystem a(small_spec(), BspLayout{n, 1, 0}, compiler::collective_program(ring));
      FunctionalSystem b(small_spec(), BspLayout{n, 1, 0}, compiler::collective_program(tor));
      EXPECT_EQ(run(b, tor, in), run(a, ring, in)) << n;
    }
}

TEST(TorusAllReduce, ReductionOrderIsTheDocumentedNestedRingOrder) {
  // Grid 2 x 2, one word per base fragment. Word 0 (digits 0, 0) is (x0 + x1) + (x2 + x3): with
  // 1e8, 1, -1e8, 1 that is 1e8 + -1e8 = 0 in fp32, where the ring's ((x0 + x1) + x2) + x3 is 1.
  CollectiveSpec spec = torus({2, 2}, 4);
  const uint32_t big = std::bit_cast<uint32_t>(1e8f), one = std::bit_cast<uint32_t>(1.0f),
                 minus = std::bit_cast<uint32_t>(-1e8f);
  const std::vector<std::vector<uint32_t>> in = {
      {big, 0, 0, 0}, {one, 0, 0, 0}, {minus, 0, 0, 0}, {one, 0, 0, 0}};
  const std::vector<uint32_t> want = compiler::collective_reference(spec, in);
  EXPECT_EQ(std::bit_cast<float>(want[0]), (1e8f + 1.0f) + (-1e8f + 1.0f));
  EXPECT_EQ(std::bit_cast<float>(want[0]), 0.0f);
  CollectiveSpec ring = spec;
  ring.algorithm = CollectiveAlgorithm::kRing;
  ring.grid.clear();
  EXPECT_EQ(std::bit_cast<float>(compiler::collective_reference(ring, in)[0]), 1.0f);
  FunctionalSystem sys(small_spec(), BspLayout{4, 1, 0}, compiler::collective_program(spec));
  expect_all_equal(run(sys, spec, in), want, "order");
}

TEST(TorusAllReduce, PerProcessorImagesGiveTheSameResultsAsTheOneImage) {
  CollectiveSpec spec = torus({2, 3, 2}, 77);
  spec.directions = 2;
  const auto in = inputs(12, spec.words, 13);
  std::vector<isa::Program> each;
  for (int p = 0; p < 12; ++p) each.push_back(compiler::collective_program_for(spec, p));
  FunctionalSystem a(small_spec(), BspLayout{12, 1, 0}, compiler::collective_program(spec));
  FunctionalSystem b(small_spec(), BspLayout{12, 1, 0}, each);
  EXPECT_EQ(run(a, spec, in), run(b, spec, in));
}

TEST(TorusAllReduce, CoordinatesAreExactOn512Processors) {
  // The coordinates come from %pid by multiply-and-shift division: 512 processors as 2 x 16 x 16
  // (9-bit indices), one word per processor, equal to the reference on every processor.
  CollectiveSpec spec = torus({2, 16, 16}, 515);
  spec.base = 0;
  spec.directions = 2;
  const auto in = inputs(512, spec.words, 21);
  FunctionalSystem sys(tiny(), BspLayout{512, 1, 0}, compiler::collective_program(spec));
  expect_all_equal(run(sys, spec, in), compiler::collective_reference(spec, in), "2x16x16");
  EXPECT_EQ(sys.supersteps(), 2 * (1 + 15 + 15));
}

// The timed system on a 2-D torus of chips with 2 cores each (grid 2 x 3 x 2) and on a ring of 3
// chips with 2 cores (grid 2 x 3), under 5% loss: values equal the reference and the supersteps are
// the torus's; the ring on the same machine needs more supersteps and more time.
TEST(TorusAllReduce, OnTheTimedSystemEqualsTheReferenceInFewerSupersteps) {
  for (Topology topo : {Topology::kTorus2d, Topology::kRing}) {
    SystemSpec s;
    s.topology = topo;
    s.cores_per_chip = 2;
    s.chips = s.chips_per_board = topo == Topology::kTorus2d ? 6 : 3;
    s.dims_x = topo == Topology::kTorus2d ? 3 : 1;
    s.dims_y = topo == Topology::kTorus2d ? 2 : 1;
    s.packet_payload_bytes = 64;
    s.loss_rate = 0.05;
    const std::vector<int> grid =
        topo == Topology::kTorus2d ? std::vector<int>{2, 3, 2} : std::vector<int>{2, 3};
    CollectiveSpec spec = torus(grid, 1001);
    spec.directions = 2;
    CollectiveSpec ring = spec;
    ring.algorithm = CollectiveAlgorithm::kRing;
    ring.grid.clear();
    const auto in = inputs(spec.processors, spec.words, 17);
    SystemOptions opt;
    opt.seed = 3;
    System a(small_spec(), s, compiler::collective_program(spec), opt);
    System b(small_spec(), s, compiler::collective_program(ring), opt);
    const std::string what = grid_name(grid);
    expect_all_equal(run(a, spec, in), compiler::collective_reference(spec, in), what);
    expect_all_equal(run(b, ring, in), compiler::collective_reference(ring, in), what);
    EXPECT_EQ(a.groups().front().supersteps, expected_supersteps(grid)) << what;
    EXPECT_EQ(b.groups().front().supersteps, 2 * (spec.processors - 1)) << what;
    EXPECT_LT(a.seconds(), b.seconds()) << what;
  }
}

}  // namespace
}  // namespace tessera::system
