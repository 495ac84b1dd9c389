// Simulated faults: each kind names pc, cycle and the bundle text, identically in both
// interpreters (the functional interpreter's cycle is its bundle count).
#include "core/fault.h"

#include <gtest/gtest.h>

#include "core_test_util.h"

namespace tessera::core {
namespace {

struct Faults {
  std::string functional, timed;
};

Faults faults_of(const CoreSpec& spec, const isa::Program& p, int64_t max_bundles = 1'000'000) {
  Faults f;
  try {
    FunctionalCore c(spec, p, RunOptions{max_bundles});
    c.run();
  } catch (const SimFault& e) {
    f.functional = e.what();
  }
  try {
    TimedOptions o;
    o.max_bundles = max_bundles;
    Core c(spec, p, o);
    c.run();
  } catch (const SimFault& e) {
    f.timed = e.what();
  }
  return f;
}

Faults faults_of(const CoreSpec& spec, std::string_view text, int64_t max_bundles = 1'000'000) {
  return faults_of(spec, test::assemble(text, spec), max_bundles);
}

TEST(Faults, RunningOffTheEndOfTheCode_bad) {
  const auto f = faults_of(test::small_spec(), "sli s1, 1\n  sli s2, 2\n");
  EXPECT_EQ(f.functional,
            "simulated fault at pc 2 cycle 2 [no bundle]: fetch outside the code (0..1): the "
            "program ran off its "
            "end or branched outside it (every path must end with halt)");
  EXPECT_EQ(f.timed, f.functional);
}

TEST(Faults, ScalarMemoryOutOfRange_bad) {
  const auto f = faults_of(test::small_spec(), "sli s1, 1000\n  sld s2, [s1+24]\n  halt\n");
  EXPECT_EQ(f.functional,
            "simulated fault at pc 1 cycle 1 [sld s2, [s1+24]]: sld: scalar memory address 1024 "
            "out of range 0..1023");
  EXPECT_EQ(f.timed, f.functional);
  const auto g = faults_of(test::small_spec(), "sli s1, -1\n  nop\n  sst s2, [s1+0]\n  halt\n");
  EXPECT_EQ(g.timed,
            "simulated fault at pc 2 cycle 2 [sst s2, [s1]]: sst: scalar memory address -1 out of "
            "range 0..1023");
}

TEST(Faults, VectorMemoryOutOfRange_bad) {
  const auto f = faults_of(test::small_spec(), "sli s1, 2047\n  vld v1, [s1+0]\n  halt\n");
  EXPECT_EQ(f.timed,
            "simulated fault at pc 1 cycle 1 [vld v1, [s1]]: vld: vector memory row 2048 out of "
            "range 0..2047");
  EXPECT_EQ(f.functional, f.timed);
  const auto g = faults_of(test::small_spec(),
                           "vbcasti v2, -1\n  sli s1, 0\n  vst.x v1, [s1+0], v2\n  halt\n");
  EXPECT_EQ(g.timed,
            "simulated fault at pc 2 cycle 2 [vst.x v1, [s1], v2]: vst.x: element 0 addresses "
            "vector memory word -1 "
            "out of range 0..16383");
}

TEST(Faults, PopFromAnEmptyFifoWithNothingInFlight_bad) {
  const auto f = faults_of(test::small_spec(), "nop\n  epop v1\n  halt\n");
  EXPECT_EQ(f.timed,
            "simulated fault at pc 1 cycle 1 [epop v1]: pop from the empty EUP FIFO (no result "
            "pushed or in flight)");
  EXPECT_EQ(f.functional, f.timed);
  EXPECT_EQ(faults_of(test::small_spec(), "rpop v1\n  halt\n").timed,
            "simulated fault at pc 0 cycle 0 [rpop v1]: pop from the empty reduce/permute FIFO (no "
            "result pushed or in "
            "flight)");
  EXPECT_EQ(faults_of(test::small_spec(), "xpop v1\n  halt\n").timed,
            "simulated fault at pc 0 cycle 0 [xpop v1]: pop from the empty transpose FIFO (no "
            "result pushed or in "
            "flight)");
  EXPECT_EQ(faults_of(test::small_spec(), "mpop v1\n  halt\n").timed,
            "simulated fault at pc 0 cycle 0 [mpop v1]: mpop: the result FIFO is empty and no "
            "result is in flight");
}

TEST(Faults, PushIntoAFifoFullOfUnpoppedResults_bad) {
  const auto f = faults_of(test::small_spec({{"eup", {{"fifo", 2}}}}),
                           "eexp v1\n  eexp v1\n  eexp v1\n  halt\n");
  EXPECT_EQ(f.functional,
            "simulated fault at pc 2 cycle 2 [eexp v1]: push into the full EUP FIFO (2 results not "
            "popped; only a pop "
            "could make room)");
  EXPECT_EQ(f.timed,
            "simulated fault at pc 2 cycle 4 [eexp v1]: push into the full EUP FIFO (2 results not "
            "popped; only a pop "
            "could make room)");
  const auto x = faults_of(test::small_spec(),
                           "xpush v1\n  xpush v1\n  xpush v1\n  xpush v1\n  xpush v1\n  halt\n");
  EXPECT_EQ(x.functional,
            "simulated fault at pc 4 cycle 4 [xpush v1]: xpush: the transpose unit holds 4 slices "
            "(its FIFO depth); pop "
            "results first");
}

TEST(Faults, WaitOnAFlagNothingWillSignal_bad) {
  const auto f = faults_of(test::small_spec(), "signal 3, 1\n  wait 3, 2\n  halt\n");
  EXPECT_EQ(f.timed,
            "simulated fault at pc 1 cycle 1 [wait 3, 2]: wait on sync flag 3 for 2 can never "
            "finish: the flag is 1 and "
            "no outstanding DMA signals it enough");
  EXPECT_EQ(f.functional, f.timed);
  // One DMA outstanding on the flag is not enough for a wait of 2 (functional: it completed at
  // once).
  const auto g = faults_of(test::small_spec(),
                           "sli s1, 0 ;; sli s2, 4\n  dma.hv s1, s1, s2, 0\n  wait 0, 2\n  halt\n");
  EXPECT_EQ(g.timed,
            "simulated fault at pc 2 cycle 2 [wait 0, 2]: wait on sync flag 0 for 2 can never "
            "finish: the flag is 0 and "
            "no outstanding DMA signals it enough");
  EXPECT_EQ(g.functional,
            "simulated fault at pc 2 cycle 2 [wait 0, 2]: wait on sync flag 0 for 2 can never "
            "finish: the flag is 1 and "
            "no outstanding DMA signals it enough");
}

TEST(Faults, DmaOutOfRange_bad) {
  const auto f =
      faults_of(test::small_spec(),
                "sli s1, 262140 ;; sli s2, 8\n  sli s3, 0\n  dma.hv s3, s1, s2, 0\n  halt\n");
  EXPECT_EQ(f.timed,
            "simulated fault at pc 2 cycle 2 [dma.hv s3, s1, s2, 0]: dma.hv: HBM words [262140, "
            "262148) outside [0, "
            "262144)");
  EXPECT_EQ(f.functional, f.timed);
}

TEST(Faults, RegistersAndFlagsBeyondTheConfiguration_bad) {
  const CoreSpec spec = test::small_spec({{"vector", {{"regs", 16}}}, {"sync", {{"flags", 4}}}});
  isa::Program p;
  isa::Bundle b;
  b[isa::Slot::V0] = isa::Instr{isa::Opcode::VMOV, 20, 1, 0, 0, 0};
  p.code = {isa::Bundle{}, b};
  EXPECT_EQ(faults_of(spec, p).timed,
            "simulated fault at pc 1 cycle 1 [vmov v20, v1]: slot v0: vmov: register v20 does not "
            "exist (this "
            "configuration has 16)");
  isa::Bundle w;
  w[isa::Slot::MISC] = isa::Instr{isa::Opcode::SIGNAL, 0, 9, 0, 0, 1};
  p.code = {w};
  EXPECT_EQ(faults_of(spec, p).functional,
            "simulated fault at pc 0 cycle 0 [signal 9, 1]: slot misc: signal: sync flag 9 does "
            "not exist (this "
            "configuration has 4)");
}

TEST(Faults, TheBundleLimitCountsFromTheLastLoad) {
  // 5 bundles per run, a limit of 8: the same program run again and again after load() never
  // reaches it (a training step run step after step); a second run without a load does.
  const isa::Program p = test::assemble(
      "sli s1, 1\n  sli s2, 2\n  sli s3, 3\n  sli s4, 4\n  halt\n", test::small_spec());
  TimedOptions o;
  o.max_bundles = 8;
  Core c(test::small_spec(), p, o);
  for (int run = 0; run < 4; ++run) {
    if (run > 0) c.load(p);
    EXPECT_NO_THROW(c.run()) << "run " << run;
  }
  EXPECT_EQ(c.bundles(), 20);
  Core once(test::small_spec(), test::assemble("top: jmp top\n  halt\n", test::small_spec()), o);
  EXPECT_THROW(once.run(), SimFault);
}

TEST(Faults, RunawayLoopHitsTheBundleLimit_bad) {
  const auto f = faults_of(test::small_spec(), "top: jmp top\n  halt\n", 1000);
  EXPECT_EQ(f.functional,
            "simulated fault at pc 0 cycle 1000 [jmp 0]: bundle limit of 1000 reached (a runaway "
            "loop? raise "
            "--max-bundles)");
  EXPECT_EQ(f.timed, f.functional);
}

TEST(Faults, MisusedUnits_bad) {
  const CoreSpec spec = test::small_spec();
  EXPECT_EQ(faults_of(spec, "smtsr %cycle_lo, s1\n  halt\n").timed,
            "simulated fault at pc 0 cycle 0 [smtsr %cycle_lo, s1]: smtsr: %cycle_lo is read-only");
  EXPECT_EQ(faults_of(spec, "mlw v1\n  mflip\n  halt\n").timed,
            "simulated fault at pc 1 cycle 2 [mflip]: mflip: only 2 of 8 weight rows are staged "
            "(one mlw stages 2)");
  EXPECT_EQ(faults_of(spec, "mmul v1\n  halt\n").functional,
            "simulated fault at pc 0 cycle 0 [mmul v1]: mmul: no active weight tile (mlw the rows, "
            "then mflip)");
  EXPECT_EQ(faults_of(spec, "rsegsum v1, 3\n  halt\n").timed,
            "simulated fault at pc 0 cycle 0 [rsegsum v1, 3]: rsegsum: segment width 3 is not a "
            "power of two in 1..8");
}

TEST(Faults, AFaultIsATesseraErrorWithPcAndCycle) {
  const CoreSpec spec = test::small_spec();
  Core c(spec, test::assemble("nop\n  nop\n  epop v1\n  halt\n", spec));
  try {
    c.run();
    FAIL() << "no fault";
  } catch (const Error& e) {
    const auto* f = dynamic_cast<const SimFault*>(&e);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->pc(), 2);
    EXPECT_EQ(f->cycle(), 2);
    EXPECT_EQ(e.where(), "simulated fault at pc 2 cycle 2 [epop v1]");
  }
}

}  // namespace
}  // namespace tessera::core
