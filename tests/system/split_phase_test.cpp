// The split-phase exchange (core/exchange.h: xsync / xwait; system/system.h "Split phase"): a core
// leaves the barrier while its exchange travels, computes, and waits for its arrivals only at
// xwait. Values equal the blocking (sync) program's; only time changes, by hand-checked amounts;
// the same for any number of ranks; a wait nothing can complete is a fault, not a hang.
#include <bit>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/byte_codec.h"
#include "compiler/collectives.h"
#include "core/core.h"
#include "isa/assembler.h"
#include "support/error_of.h"
#include "system/functional_system.h"
#include "system/mpi_thread_communicator.h"
#include "system/small_spec.h"
#include "system/system.h"

namespace tessera::system {
namespace {

constexpr uint32_t kWords = 16;  // one 64-byte packet

// Two chips of one core on a line; barrier only before the exchange, 1000 ns.
SystemSpec pair_spec() {
  SystemSpec s;
  s.chips = 2;
  s.chips_per_board = 2;
  s.topology = Topology::kLine;
  s.packet_payload_bytes = 64;
  s.barrier_placement = BarrierPlacement::kComputeToExchange;
  s.barrier_latency_ns = 1000;
  return s;
}

// Processor p sends its vmem words [0, 16) to processor 1 - p's words [16, 32); then `sync` or
// `xsync`; then `compute` bundles that touch neither range (nops, or stores to row 8 = words
// [64, ...)); with xsync an xwait; then halt.
std::string exchange_program(bool split, int compute) {
  std::string s =
      "smfsr s1, %pid\n"
      "sli s2, 1 ;; sli s4, 16\n"
      "sli s5, 0\n"
      "ssub s3, s2, s1\n"
      "xsend s4, s5, s4, s3\n";
  s += split ? "xsync\n" : "sync\n";
  for (int i = 0; i < compute; ++i) s += "nop\n";
  if (split) s += "xwait\n";
  return s + "halt\n";
}

uint32_t input_word(int p, uint32_t i) {
  return std::bit_cast<uint32_t>(static_cast<float>(p * 100 + i) + 0.25f);
}

std::vector<uint32_t> words_of(const core::ZeroedWords& w) {
  return {w.data(), w.data() + w.size()};
}

struct Outcome {
  int64_t cycles = 0;          // processor 0's
  int64_t exchange_stall = 0;  // processor 0's StallCause::Exchange cycles
  std::vector<std::vector<uint32_t>> vmem;
};

Outcome run_timed(const std::string& program, const SystemSpec& spec = pair_spec()) {
  System sys(small_spec(), spec, isa::assemble(program));
  for (int p = 0; p < 2; ++p)
    for (uint32_t i = 0; i < kWords; ++i) sys.core(p).host_state().vmem[i] = input_word(p, i);
  sys.run();
  Outcome r;
  r.cycles = sys.core(0).cycles();
  r.exchange_stall = sys.core(0).stall_cycles(core::StallCause::Exchange);
  for (int p = 0; p < 2; ++p) r.vmem.push_back(words_of(sys.core(p).state().vmem));
  EXPECT_EQ(sys.core(1).cycles(), r.cycles);  // symmetric programs
  return r;
}

// Hand check of the blocking program (700 MHz: 1 cycle = 1428.571 ps; at most 2 scalar ops a
// bundle): smfsr at cycle 0, the two sli bundles at 1 and 2, ssub at 3, xsend at 4, sync at 5, so
// the core arrives at the barrier at a = 6 cycles = 8,571 ps. Posting = a + 1000 ns = 1,008,571 ps
// = cycle 705.9997 -> the barrier ends at cycle 706 (ps_to_cycles: the first cycle at or after it):
// 700 cycles of barrier. The one packet (64 + 32 header bytes) arrives 500 ns + 96 B / 62 GB/s =
// 501,548 ps later: 1,510,119 ps = cycle 1057.08 -> resume at cycle 1058 (352 cycles of exchange),
// halt issues there: 1059 cycles.
constexpr int64_t kBlockingCycles = 1059, kBarrierStall = 700, kExchangeWait = 352;

TEST(SplitPhase, BlockingSyncTimingIsTheHandCheckedOne) {
  const Outcome r = run_timed(exchange_program(false, 0));
  EXPECT_EQ(r.cycles, kBlockingCycles);
  EXPECT_EQ(r.exchange_stall, kBarrierStall + kExchangeWait);
}

TEST(SplitPhase, WithNothingToOverlapXsyncCostsOnlyTheXwaitBundle) {
  const Outcome b = run_timed(exchange_program(false, 0)), s = run_timed(exchange_program(true, 0));
  EXPECT_EQ(s.cycles, kBlockingCycles + 1);
  EXPECT_EQ(s.exchange_stall, kBarrierStall + kExchangeWait);  // 700 at the barrier, 352 at xwait
  EXPECT_EQ(s.vmem, b.vmem);
}

TEST(SplitPhase, ComputeShorterThanTheExchangeIsHiddenCompletely) {
  const int compute = 200;  // < 352
  const Outcome b = run_timed(exchange_program(false, compute)),
                s = run_timed(exchange_program(true, compute));
  EXPECT_EQ(b.cycles, kBlockingCycles + compute);
  EXPECT_EQ(s.cycles, kBlockingCycles + 1);
  EXPECT_EQ(s.exchange_stall, kBarrierStall + kExchangeWait - compute);
  EXPECT_EQ(s.vmem, b.vmem);
}

TEST(SplitPhase, ComputeLongerThanTheExchangeHidesAllOfIt) {
  const int compute = 500;  // > 352: xwait does not stall
  const Outcome b = run_timed(exchange_program(false, compute)),
                s = run_timed(exchange_program(true, compute));
  EXPECT_EQ(b.cycles, kBlockingCycles + compute);
  EXPECT_EQ(s.cycles, kBlockingCycles - kExchangeWait + compute + 1);
  EXPECT_EQ(s.exchange_stall, kBarrierStall);
  EXPECT_EQ(s.vmem, b.vmem);
}

TEST(SplitPhase, ArrivalsLandAtTheExpectedWordsAndEqualTheFunctionalSystem) {
  const std::string program = exchange_program(true, 30);
  const Outcome t = run_timed(program);
  FunctionalSystem f(small_spec(), BspLayout{2, 1, 0}, isa::assemble(program));
  for (int p = 0; p < 2; ++p)
    for (uint32_t i = 0; i < kWords; ++i) f.core(p).state().vmem[i] = input_word(p, i);
  f.run();
  for (int p = 0; p < 2; ++p) {
    for (uint32_t i = 0; i < kWords; ++i)
      EXPECT_EQ(t.vmem[p][kWords + i], input_word(1 - p, i)) << p << " " << i;
    EXPECT_EQ(words_of(f.core(p).state().vmem), t.vmem[p]) << p;
  }
}

// Received data appear at the xwait: a load of the destination words after it reads them, in
// both interpreters; words elsewhere (row 8 on: words 1024..) may be used before it.
std::string load_program(const std::string& before_wait) {
  return "smfsr s1, %pid\n"
         "sli s2, 1 ;; sli s4, 16\n"
         "sli s5, 0 ;; sli s6, 8\n"
         "ssub s3, s2, s1\n"
         "xsend s4, s5, s4, s3\n"
         "xsync\n" +
         before_wait +
         "xwait\n"
         "vld v2, [s5+0]\n"
         "halt\n";
}

TEST(SplitPhase, ReceivedWordsAppearAtTheXwait) {
  const std::string program = load_program("vld v1, [s6+0]\nvst v1, [s6+8]\n");
  System t(small_spec(), pair_spec(), isa::assemble(program));
  FunctionalSystem f(small_spec(), BspLayout{2, 1, 0}, isa::assemble(program));
  for (int p = 0; p < 2; ++p)
    for (uint32_t i = 0; i < kWords; ++i)
      t.core(p).host_state().vmem[i] = f.core(p).state().vmem[i] = input_word(p, i);
  t.run();
  f.run();
  for (int p = 0; p < 2; ++p) {
    EXPECT_EQ(core::diff_architectural_state(t.core(p).state(), f.core(p).state()), "") << p;
    EXPECT_EQ(t.core(p).state().vreg(2)[16], input_word(1 - p, 0))
        << p;  // word 16 = row 0, lane 16
  }
}

// The contract that makes xsync values equal sync values is checked: touching words an exchange is
// still receiving faults, for loads, stores, DMAs and sends alike.
TEST(SplitPhase, bad_touching_words_still_being_received_is_a_fault) {
  // The core leaves the barrier at cycle 706 (hand check above); the touching op issues there.
  const std::string tail =
      " overlap words [16, 32) that the pending xsync exchange is still receiving (touch them "
      "after xwait)";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"vld v1, [s5+0]\n", "pc 6 cycle 706 [vld v1, [s5]]: vld: vector memory words [0, 128)"},
      {"vst v1, [s5+0]\n", "pc 6 cycle 706 [vst v1, [s5]]: vst: vector memory words [0, 128)"},
      {"sli s8, 20\ndma.hv s8, s5, s2, 3\n",
       "pc 7 cycle 707 [dma.hv s8, s5, s2, 3]: dma.hv: vector memory words [20, 21)"},
      {"xsend s5, s4, s2, s3\n",
       "pc 6 cycle 706 [xsend s5, s4, s2, s3]: xsend: vector memory words [16, 17)"},
  };
  for (const auto& [code, want] : cases) {
    System sys(small_spec(), pair_spec(), isa::assemble(load_program(code)));
    EXPECT_EQ(testing::error_of([&] { sys.run(); }),
              "processor 0 (chip 0, core 0): simulated fault at " + want + tail);
  }
}

TEST(SplitPhase, TheNextSyncWaitsForThePendingExchange) {
  // xsync, then sync at once: the sync stalls until the exchange is done (issues at 1058, like the
  // blocking program's halt), arrives at 1059, and the empty second superstep's barrier ends at
  // 1059 + 700: halt at 1759, 1760 cycles; waits 700 + 352 + 700.
  std::string program = exchange_program(true, 0);
  program.replace(program.find("xwait"), 5, "sync");
  const Outcome s = run_timed(program), b = run_timed(exchange_program(false, 0));
  EXPECT_EQ(s.vmem, b.vmem);
  EXPECT_EQ(s.cycles, kBlockingCycles + kBarrierStall + 1);
  EXPECT_EQ(s.exchange_stall, 2 * kBarrierStall + kExchangeWait);
}

TEST(SplitPhase, HaltWaitsForThePendingExchange) {
  const std::string program = exchange_program(true, 0);
  const Outcome s = run_timed(program.substr(0, program.find("xwait")) + "halt\n");
  const Outcome b = run_timed(exchange_program(false, 0));
  EXPECT_EQ(s.cycles, kBlockingCycles);
  EXPECT_EQ(s.vmem, b.vmem);
}

TEST(SplitPhase, EveryBarrierPlacementKeepsTheValues) {
  for (BarrierPlacement placement :
       {BarrierPlacement::kComputeToExchange, BarrierPlacement::kExchangeToCompute,
        BarrierPlacement::kBoth}) {
    SystemSpec spec = pair_spec();
    spec.barrier_placement = placement;
    const Outcome b = run_timed(exchange_program(false, 100), spec),
                  s = run_timed(exchange_program(true, 100), spec);
    EXPECT_EQ(s.vmem, b.vmem) << barrier_placement_name(placement);
    EXPECT_LT(s.cycles, b.cycles) << barrier_placement_name(placement);
  }
}

TEST(SplitPhase, OutsideASystemXsyncDeliversOwnSendsAtTheXwait) {
  const core::CoreSpec spec = small_spec();
  core::Core c(spec, isa::assemble("sli s1, 0 ;; sli s2, 16\n"
                                   "sli s3, 4\n"
                                   "xsend s2, s1, s3, s1\n"
                                   "xsync\n"
                                   "xwait\n"
                                   "halt\n"));
  for (uint32_t i = 0; i < 4; ++i) c.host_state().vmem[i] = input_word(0, i);
  c.run();
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(c.state().vmem[16 + i], input_word(0, i));
  EXPECT_EQ(c.stall_cycles(core::StallCause::Exchange), 0);
}

TEST(SplitPhase, bad_xwait_without_a_pending_exchange_is_a_fault_not_a_hang) {
  System sys(small_spec(), pair_spec(), isa::assemble("nop\nxwait\nhalt\n"));
  EXPECT_EQ(testing::error_of([&] { sys.run(); }),
            "processor 0 (chip 0, core 0): simulated fault at pc 1 cycle 1 [xwait]: xwait: no "
            "xsync exchange is pending "
            "(none since the last wait), so nothing can complete it");
}

TEST(SplitPhase, bad_a_second_xwait_after_the_exchange_completed_is_a_fault) {
  const std::string program = exchange_program(true, 0);
  System sys(small_spec(), pair_spec(),
             isa::assemble(program.substr(0, program.find("halt")) + "xwait\nhalt\n"));
  EXPECT_EQ(testing::error_of([&] { sys.run(); }),
            "processor 0 (chip 0, core 0): simulated fault at pc 7 cycle 1059 [xwait]: xwait: no "
            "xsync exchange is "
            "pending (none since the last wait), so nothing can complete it");
}

// The generated ring all-reduce with split-phase steps (compiler/collectives.h split_phase): the
// same values as the blocking one on the timed system, in less simulated time (each step's index
// updates run while its exchange travels; one xwait bundle more per step).
TEST(SplitPhase, GeneratedAllReduceKeepsItsValuesAndSavesTime) {
  SystemSpec spec = pair_spec();
  spec.chips = spec.chips_per_board = 4;
  spec.topology = Topology::kRing;
  compiler::CollectiveSpec c;
  c.processors = 4;
  c.words = 301;
  c.base = 64;
  c.directions = 2;
  std::vector<std::vector<uint32_t>> vectors[2];
  fabric::Picos end[2] = {0, 0};
  for (int split = 0; split < 2; ++split) {
    c.split_phase = split == 1;
    System sys(small_spec(), spec, compiler::collective_program(c));
    for (int p = 0; p < 4; ++p)
      for (uint32_t i = 0; i < c.words; ++i)
        sys.core(p).host_state().vmem[c.base + i] = input_word(p, i);
    sys.run();
    for (int p = 0; p < 4; ++p) {
      const uint32_t* v = sys.core(p).state().vmem.data() + c.base;
      vectors[split].emplace_back(v, v + c.words);
    }
    end[split] = sys.end_ps();
  }
  EXPECT_EQ(vectors[1], vectors[0]);
  EXPECT_LT(end[1], end[0]);
}

// The distributed System: the split-phase program gives the same values, cycles and statistics for
// R = 1, 2 and 4 ranks (one core per rank and some idle ranks).
TEST(SplitPhase, RanksOneTwoFourAreBitIdentical) {
  SystemSpec spec = pair_spec();
  spec.chips = spec.chips_per_board = 2;
  spec.cores_per_chip = 2;
  spec.loss_rate = 0.05;
  // Four processors: p sends to p ^ 1.
  const isa::Program image = isa::assemble(
      "smfsr s1, %pid\n"
      "sli s2, 1 ;; sli s4, 16\n"
      "sli s5, 0\n"
      "sxor s3, s1, s2\n"
      "xsend s4, s5, s4, s3\n"
      "xsync\n"
      "sli s7, 40\n"
      "spin:\n"
      "loop s7, spin\n"
      "xwait\n"
      "xsend s5, s4, s4, s3\n"
      "xsync\n"
      "xwait\n"
      "halt\n");
  auto run = [&](int ranks) {
    return on_thread_ranks<std::string>(ranks, [&](Communicator& comm) {
      SystemOptions opt;
      opt.comm = &comm;
      opt.seed = 5;
      System sys(small_spec(), spec, image, opt);
      for (int p = 0; p < 4; ++p)
        if (sys.is_local(p))
          for (uint32_t i = 0; i < kWords; ++i) sys.core(p).host_state().vmem[i] = input_word(p, i);
      sys.run();
      std::string out = sys.stats_json().dump();
      for (int p = 0; p < 4; ++p) {
        const Bytes b = sys.from_processor(p, [&](const core::Core& k) {
          ByteWriter w;
          w.append(k.state().vmem.data(), 2 * kWords * sizeof(uint32_t));
          w.put(k.cycles());
          w.put(k.stall_cycles(core::StallCause::Exchange));
          return w.bytes();
        });
        out.append(reinterpret_cast<const char*>(b.data()), b.size());
      }
      return out;
    });
  };
  const std::string one = run(1)[0];
  for (int ranks : {2, 4})
    for (const std::string& got : run(ranks)) EXPECT_EQ(got, one) << ranks << " ranks";
}

}  // namespace
}  // namespace tessera::system
