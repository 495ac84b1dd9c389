// Golden values for every scalar op, through both interpreters.
#include <gtest/gtest.h>

#include "core_test_util.h"

namespace tessera::core {
namespace {

struct Case {
  const char* op;
  int32_t a, b;
  uint32_t want;
};

uint32_t run_scalar(const std::string& op, int32_t a, int32_t b) {
  const CoreSpec spec = test::small_spec();
  const std::string text = "sli s1, " + std::to_string(a) + " ;; sli s2, " + std::to_string(b) +
                           "\n  " + op + "\n  halt\n";
  return test::run_both(spec, text)->state().sreg(3);
}

TEST(ScalarOps, RegisterRegisterOpsGiveTheirGoldenValues) {
  const std::vector<Case> cases = {
      {"sadd", 0x7fffffff, 1, 0x80000000u},
      {"ssub", 3, 5, 0xfffffffeu},
      {"smul", 0x10001, 0x10001, 0x20001u},
      {"sand", 0xff0, 0x0ff, 0x0f0u},
      {"sor", 0xff0, 0x0ff, 0xfffu},
      {"sxor", 0xff0, 0x0ff, 0xf0fu},
      {"sshl", 1, 33, 2u},
      {"sshr", -8, 1, 0x7ffffffcu},
      {"ssra", -8, 1, 0xfffffffcu},
      {"sslt", -1, 1, 1u},
      {"sslt", 1, -1, 0u},
      {"ssltu", -1, 1, 0u},
      {"ssltu", 1, -1, 1u},
      {"sseq", 7, 7, 1u},
      {"sseq", 7, 8, 0u},
      {"smin", -5, 3, 0xfffffffbu},
      {"smax", -5, 3, 3u},
  };
  for (const Case& c : cases)
    EXPECT_EQ(run_scalar(std::string(c.op) + " s3, s1, s2", c.a, c.b), c.want)
        << c.op << " " << c.a << " " << c.b;
}

TEST(ScalarOps, ImmediateOpsGiveTheirGoldenValues) {
  const std::vector<Case> cases = {
      {"saddi", -1, -1, 0xfffffffeu}, {"smuli", 7, -3, 0xffffffebu},
      {"sandi", 0x1234, 0xff, 0x34u}, {"sori", 0x1200, 0x34, 0x1234u},
      {"sxori", -1, 1, 0xfffffffeu},  {"sshli", 3, 36, 48u},
      {"sshri", -1, 28, 0xfu},        {"ssrai", -256, 4, 0xfffffff0u},
      {"sslti", -3, -2, 1u},          {"sslti", -2, -3, 0u},
  };
  for (const Case& c : cases)
    EXPECT_EQ(run_scalar(std::string(c.op) + " s3, s1, " + std::to_string(c.b), c.a, c.b), c.want)
        << c.op;
  EXPECT_EQ(run_scalar("sli s3, -7", 0, 0), 0xfffffff9u);
  EXPECT_EQ(run_scalar("smov s3, s1", 42, 0), 42u);
}

TEST(ScalarOps, LoadsAndStoresUseBasePlusOffset) {
  const CoreSpec spec = test::small_spec();
  auto c = test::run_both(spec, R"(
.smem 100
.word 11, 22, 33
  sli s1, 104
  sld s2, [s1-3] ;; sli s4, 77
  sst s4, [s1+5]
  sld s5, [s1+5]
  halt
)");
  EXPECT_EQ(c->state().sreg(2), 22u);
  EXPECT_EQ(c->state().smem[109], 77u);
  EXPECT_EQ(c->state().sreg(5), 77u);
}

// Each branch: s3 = 1 if taken, 2 if not.
uint32_t branch(const std::string& op, int32_t a, int32_t b) {
  return run_scalar(op + " s1, s2, yes\n  sli s3, 2\n  halt\nyes: sli s3, 1\n  halt", a, b);
}

TEST(ScalarOps, BranchesTakeTheirConditions) {
  EXPECT_EQ(branch("beq", 4, 4), 1u);
  EXPECT_EQ(branch("beq", 4, 5), 2u);
  EXPECT_EQ(branch("bne", 4, 5), 1u);
  EXPECT_EQ(branch("bne", 4, 4), 2u);
  EXPECT_EQ(branch("blt", -1, 0), 1u);
  EXPECT_EQ(branch("blt", 0, -1), 2u);
  EXPECT_EQ(branch("bge", 0, 0), 1u);
  EXPECT_EQ(branch("bge", -1, 0), 2u);
  EXPECT_EQ(branch("bltu", 0, -1), 1u);
  EXPECT_EQ(branch("bltu", -1, 0), 2u);
  EXPECT_EQ(branch("bgeu", -1, 0), 1u);
  EXPECT_EQ(branch("bgeu", 0, -1), 2u);
  EXPECT_EQ(run_scalar("jmp yes\n  sli s3, 2\n  halt\nyes: sli s3, 1\n  halt", 0, 0), 1u);
}

TEST(ScalarOps, LoopCountsDownAndFallsThroughAtZero) {
  const CoreSpec spec = test::small_spec();
  auto c = test::run_both(spec, R"(
  sli s1, 5 ;; sli s2, 0
top:
  saddi s2, s2, 3
  loop s1, top
  halt
)");
  EXPECT_EQ(c->state().sreg(2), 15u);
  EXPECT_EQ(c->state().sreg(1), 0u);
  EXPECT_EQ(c->bundles(), 1 + 5 * 2 + 1);
}

TEST(ScalarOps, HaltStopsAfterItsBundleAndOtherSlotsStillExecute) {
  const CoreSpec spec = test::small_spec();
  auto c = test::run_both(spec, "sli s1, 9 ;; halt\n  sli s1, 10\n  halt\n");
  EXPECT_EQ(c->state().sreg(1), 9u);
  EXPECT_TRUE(c->state().halted);
  EXPECT_EQ(c->bundles(), 1);
}

TEST(ScalarOps, SpecialRegisters) {
  const CoreSpec spec = test::small_spec();
  isa::Program p = test::assemble(R"(
  smfsr s1, %pid ;; smfsr s2, %nproc
  sli s3, 12
  smtsr %nproc, s3
  smfsr s4, %nproc
  nop
  nop
  smfsr s5, %cycle_lo ;; smfsr s6, %cycle_hi
  halt
)",
                                  spec)
                       .with_index(3);
  Core c(spec, p);
  c.run();
  FunctionalCore f(spec, p);
  f.run();
  for (const ArchState* s : {&c.state(), static_cast<const ArchState*>(&f.state())}) {
    EXPECT_EQ(s->sreg(1), 3u);
    EXPECT_EQ(s->sreg(2), 1u);
    EXPECT_EQ(s->sreg(4), 12u);
    EXPECT_EQ(s->sreg(6), 0u);
  }
  EXPECT_EQ(f.state().sreg(5), 6u);  // functional: bundles before this one
  EXPECT_EQ(c.state().sreg(5), 6u);  // timed: issue cycle (no stalls in this program)
}

}  // namespace
}  // namespace tessera::core
