// Long tier: the fast term-serial PE model against the bit-level reference on 10^7 random cases,
// and every bf16 B against fixed A sets with loaded lanes and more accumulator widths. The default
// tier (tests/numerics/term_pe_agreement_test.cpp) runs the same checks on 10^5 cases.
#include <vector>

#include <gtest/gtest.h>

#include "../numerics/term_pe_cases.h"

namespace tessera::numerics {
namespace {

using testing::fast_matches_reference;
using testing::PeCase;
using testing::PeCaseGenerator;

TEST(TermPeLong, FastModelMatchesReferenceOnTenMillionRandomCases) {
  PeCaseGenerator gen(7700001);
  for (int i = 0; i < 10'000'000; ++i)
    ASSERT_TRUE(fast_matches_reference(gen.next())) << "case " << i;
}

// Lane 0 takes every B against each fixed A; lanes 1..7 carry fixed ordinary products, so B's
// terms are judged against other lanes' exponents too.
TEST(TermPeLong, FastModelMatchesReferenceForEveryBWithLoadedLanes) {
  const std::vector<uint16_t> fixed_a = {0x3f80, 0xbfc0, 0x0001, 0x7f7f, 0x4049,
                                         0x7fc0, 0xff80, 0x8000, 0x0d80, 0x5f00};
  const std::vector<Bf16> other_a = {Bf16{0x3e00}, Bf16{0x4100}, Bf16{0xbd80}, Bf16{0},
                                     Bf16{0x3f55}, Bf16{0x4321}, Bf16{0x0042}};
  const std::vector<Bf16> other_b = {Bf16{0x3f00}, Bf16{0xc0a0}, Bf16{0x3d00}, Bf16{0x4000},
                                     Bf16{0xbf2b}, Bf16{0x3b11}, Bf16{0x3f80}};
  for (int w : {4, 7, 16, 23, 40, 56, 57, 100}) {
    PeConfig cfg;
    cfg.acc_fraction_bits = w;
    const std::vector<PeAccumulator> accs = {PeAccumulator{},
                                             accumulator_from_f32(1.0f, cfg),
                                             accumulator_from_f32(-3.5e-3f, cfg),
                                             accumulator_from_f32(7.25e20f, cfg),
                                             accumulator_from_f32(-1.0e-30f, cfg),
                                             PeAccumulator{PeAccumulator::Kind::Inf, true, 0, 0}};
    for (uint16_t a0 : fixed_a) {
      std::vector<Bf16> a = {Bf16{a0}}, b = {Bf16{0}};
      a.insert(a.end(), other_a.begin(), other_a.end());
      b.insert(b.end(), other_b.begin(), other_b.end());
      for (int bits = 0; bits < 65536; ++bits) {
        b[0] = Bf16{static_cast<uint16_t>(bits)};
        ASSERT_TRUE(fast_matches_reference(PeCase{cfg, a, b, accs[bits % accs.size()]}))
            << "A " << a0 << " B " << bits;
      }
    }
  }
}

}  // namespace
}  // namespace tessera::numerics
