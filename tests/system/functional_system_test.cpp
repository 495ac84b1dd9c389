// BSP semantics on the functional system (the definition): sync, xsend delivery and combine,
// one image + index, sync groups, and the bad-program errors.
#include "system/functional_system.h"

#include <bit>
#include <vector>

#include <gtest/gtest.h>

#include "core/functional.h"
#include "isa/assembler.h"
#include "support/error_of.h"
#include "system/small_spec.h"

namespace tessera::system {
namespace {

// Every processor writes (pid + 1) into vmem word 0, sends it to the next processor's word 1 and
// adds it into processor 0's word 2, max into word 3; sync; halt.
constexpr const char* kRingProgram = R"(
  smfsr s1, %pid ;; smfsr s2, %nproc
  saddi s3, s1, 1
  vbcast v1, s3
  vcvt.s32.f32 v1, v1
  sli s4, 0
  vst v1, [s4+0]
  sseq s5, s3, s2
  smul s5, s5, s2
  ssub s6, s3, s5
  sli s7, 1 ;; sli s8, 0
  xsend s7, s8, s7, s6
  sli s9, 2
  xsend.add s9, s8, s7, s8
  sli s10, 3
  xsend.max s10, s8, s7, s8
  sync
  halt
)";

float word(FunctionalSystem& sys, int p, int w) {
  return std::bit_cast<float>(sys.core(p).state().vmem[w]);
}

TEST(FunctionalSystem, SendsArriveAfterSyncAndCombineAtTheReceiver) {
  const isa::Program image = isa::assemble(kRingProgram);
  FunctionalSystem sys(small_spec(), BspLayout{5, 1, 0}, image);
  sys.run();
  EXPECT_EQ(sys.supersteps(), 1);
  for (int p = 0; p < 5; ++p) {
    EXPECT_EQ(sys.core(p).state().pid, static_cast<uint32_t>(p));
    EXPECT_EQ(sys.core(p).state().nproc, 5u);
    EXPECT_EQ(word(sys, p, 1), static_cast<float>((p + 4) % 5 + 1))
        << p;  // from the previous processor
  }
  EXPECT_EQ(word(sys, 0, 2), 16.0f);  // its own 1.0 (vst of row 0), then + 1 + 2 + 3 + 4 + 5
  EXPECT_EQ(word(sys, 0, 3), 5.0f);
}

TEST(FunctionalSystem, OneImageEqualsPerProcessorPrograms) {
  const isa::Program image = isa::assemble(kRingProgram);
  std::vector<isa::Program> each;
  for (uint32_t p = 0; p < 4; ++p) each.push_back(image.with_index(p));
  FunctionalSystem a(small_spec(), BspLayout{4, 2, 0}, image),
      b(small_spec(), BspLayout{4, 2, 0}, each);
  a.run();
  b.run();
  for (int p = 0; p < 4; ++p)
    EXPECT_EQ(core::diff_architectural_state(a.core(p).state(), b.core(p).state()), "");
}

TEST(FunctionalSystem, ACoreOutsideASystemDeliversItsOwnSendsAtSync) {
  const isa::Program p = isa::assemble(R"(
    sli s1, 7 ;; sli s2, 0
    vbcast v0, s1
    vst v0, [s2+0]
    sli s3, 2000 ;; sli s4, 4
    xsend s3, s2, s4, s2
    sync
    halt
  )");
  core::FunctionalCore c(small_spec(), p);
  c.run();
  for (int w = 2000; w < 2004; ++w) EXPECT_EQ(c.state().vmem[w], 7u);
  EXPECT_EQ(c.state().vmem[2004], 0u);
}

// Groups of 2: each pair exchanges a different number of supersteps (pid / 2 + 1).
TEST(FunctionalSystem, SyncGroupsRunTheirOwnSupersteps) {
  const isa::Program image = isa::assemble(R"(
    smfsr s1, %pid
    sshri s2, s1, 1
    saddi s2, s2, 1      // supersteps
    sxori s3, s1, 1      // partner
    sli s4, 0 ;; sli s5, 1
    vbcasti v0, 1.0f
    vst v0, [s4+0]
  top:
    xsend.add s5, s4, s5, s3
    sync
    loop s2, top
    halt
  )");
  FunctionalSystem sys(small_spec(), BspLayout{6, 1, 2}, image);
  sys.run();
  for (int g = 0; g < 3; ++g) EXPECT_EQ(sys.supersteps(g), g + 1);
  for (int p = 0; p < 6; ++p) EXPECT_EQ(word(sys, p, 1), 1.0f + static_cast<float>(p / 2 + 1)) << p;
}

TEST(FunctionalSystem, bad_send_to_a_processor_that_does_not_exist) {
  const isa::Program image =
      isa::assemble("sli s1, 9 ;; sli s2, 1\nxsend s2, s2, s2, s1\nsync\nhalt\n");
  FunctionalSystem sys(small_spec(), BspLayout{4, 2, 0}, image);
  EXPECT_EQ(testing::error_of([&] { sys.run(); }),
            "processor 0 (chip 0, core 0): simulated fault at pc 1 cycle 1 [xsend s2, s2, s2, s1]: "
            "xsend: processor 9 "
            "does not exist (processors 0..3)");
}

TEST(FunctionalSystem, bad_send_outside_the_vector_memory) {
  const isa::Program image = isa::assemble(
      "smfsr s1, %pid\nsli s2, 16380 ;; sli s3, 8\nxsend s2, s2, s3, s1\nsync\nhalt\n");
  FunctionalSystem sys(small_spec(), BspLayout{2, 1, 0}, image);
  EXPECT_EQ(testing::error_of([&] { sys.run(); }),
            "processor 0 (chip 0, core 0): simulated fault at pc 2 cycle 2 [xsend s2, s2, s3, s1]: "
            "xsend: source vector "
            "memory words [16380, 16388) outside [0, 16384)");
}

TEST(FunctionalSystem, bad_send_outside_the_sync_group) {
  const isa::Program image =
      isa::assemble("sli s1, 3 ;; sli s2, 1\nxsend s2, s2, s2, s1\nsync\nhalt\n");
  FunctionalSystem sys(small_spec(), BspLayout{4, 1, 2}, image);
  EXPECT_EQ(
      testing::error_of([&] { sys.run(); }),
      "processor 0, superstep 0: xsend to processor 3 outside its sync group (processors 0..1)");
}

TEST(FunctionalSystem, bad_processors_disagree_on_the_number_of_syncs) {
  const isa::Program image =
      isa::assemble("smfsr s1, %pid ;; sli s2, 2\nblt s1, s2, done\nsync\ndone:\nhalt\n");
  FunctionalSystem sys(small_spec(), BspLayout{3, 1, 0}, image);
  EXPECT_EQ(testing::error_of([&] { sys.run(); }),
            "superstep 0: processors 0,1 halted while processors 2 wait at the barrier (every "
            "processor of a sync "
            "group must execute the same number of syncs)");
}

TEST(FunctionalSystem, bad_sync_groups_that_do_not_divide_the_processors) {
  const isa::Program image = isa::assemble("halt\n");
  EXPECT_EQ(testing::error_of([&] {
              FunctionalSystem(small_spec(), BspLayout{6, 1, 4}, image);
            }),
            "system.sync_group_size: 4 does not divide the 6 processors into equal groups");
}

}  // namespace
}  // namespace tessera::system
