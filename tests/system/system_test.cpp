// The timed system: BSP supersteps on timed cores with the packet fabric. Values equal the
// functional system's (and survive packet loss bit for bit); barrier placements and their timing;
// determinism; faults naming the processor.
#include "system/system.h"

#include <bit>
#include <vector>

#include <gtest/gtest.h>

#include "compiler/collectives.h"
#include "isa/assembler.h"
#include "support/error_of.h"
#include "system/functional_system.h"
#include "system/small_spec.h"

namespace tessera::system {
namespace {

SystemSpec ring(int chips, int cores) {
  return small_ring(chips, cores);
}

compiler::CollectiveSpec allreduce(int n, uint32_t words) {
  compiler::CollectiveSpec c;
  c.processors = n;
  c.words = words;
  c.base = 8;
  c.directions = 2;
  return c;
}

core::ArchState& state_of(System& sys, int p) {
  return sys.core(p).host_state();
}
core::ArchState& state_of(FunctionalSystem& sys, int p) {
  return sys.core(p).state();
}

template <typename Sys>
void load_inputs(Sys& sys, int n, uint32_t base, uint32_t words) {
  for (int p = 0; p < n; ++p)
    for (uint32_t i = 0; i < words; ++i)
      state_of(sys, p).vmem[base + i] = std::bit_cast<uint32_t>(
          static_cast<float>(p * 1000 + i) * 0.37f + 1e-3f * static_cast<float>(i % 7));
}

template <typename Sys>
std::vector<uint32_t> vector_of(Sys& sys, int p, uint32_t base, uint32_t words) {
  const uint32_t* v = state_of(sys, p).vmem.data() + base;
  return {v, v + words};
}

struct Outcome {
  std::vector<std::vector<uint32_t>> vectors;
  fabric::Picos end = 0;
  uint64_t retransmissions = 0;
  std::string stats;
};

Outcome run_timed(const SystemSpec& spec, const compiler::CollectiveSpec& c,
                  SystemOptions opt = {}) {
  System sys(small_spec(), spec, compiler::collective_program(c), opt);
  load_inputs(sys, c.processors, c.base, c.words);
  sys.run();
  Outcome r;
  for (int p = 0; p < c.processors; ++p) r.vectors.push_back(vector_of(sys, p, c.base, c.words));
  r.end = sys.end_ps();
  for (const auto& l : sys.fabric(0).stats().links) r.retransmissions += l.retransmissions;
  r.stats = sys.stats_json().dump();
  return r;
}

TEST(System, TimedAllReduceEqualsTheFunctionalSystemAndTheReference) {
  const compiler::CollectiveSpec c = allreduce(6, 301);
  const SystemSpec spec = ring(3, 2);
  System timed(small_spec(), spec, compiler::collective_program(c));
  FunctionalSystem functional(small_spec(), BspLayout{6, 2, 0}, compiler::collective_program(c));
  load_inputs(timed, 6, c.base, c.words);
  load_inputs(functional, 6, c.base, c.words);
  std::vector<std::vector<uint32_t>> in;
  for (int p = 0; p < 6; ++p) in.push_back(vector_of(timed, p, c.base, c.words));
  timed.run();
  functional.run();
  const std::vector<uint32_t> want = compiler::collective_reference(c, in);
  for (int p = 0; p < 6; ++p) {
    EXPECT_EQ(core::diff_architectural_state(timed.core(p).state(), functional.core(p).state()), "")
        << p;
    EXPECT_EQ(vector_of(timed, p, c.base, c.words), want) << p;
  }
  EXPECT_EQ(timed.groups()[0].supersteps, 10);
  EXPECT_GT(timed.groups()[0].transfers, 0u);
}

TEST(System, FivePercentLossChangesOnlyTime) {
  const compiler::CollectiveSpec c = allreduce(4, 999);
  SystemSpec lossy = ring(4, 1);
  lossy.loss_rate = 0.05;
  const Outcome clean = run_timed(ring(4, 1), c),
                lost = run_timed(lossy, c, SystemOptions{.seed = 7});
  EXPECT_EQ(lost.vectors, clean.vectors);
  EXPECT_GT(lost.retransmissions, 0u);
  EXPECT_EQ(clean.retransmissions, 0u);
  EXPECT_GT(lost.end, clean.end);
}

TEST(System, RunsAreDeterministic) {
  SystemSpec lossy = ring(5, 1);
  lossy.loss_rate = 0.05;
  const compiler::CollectiveSpec c = allreduce(5, 257);
  const Outcome a = run_timed(lossy, c, SystemOptions{.seed = 3}),
                b = run_timed(lossy, c, SystemOptions{.seed = 3});
  EXPECT_EQ(a.vectors, b.vectors);
  EXPECT_EQ(a.end, b.end);
  EXPECT_EQ(a.stats, b.stats);
}

TEST(System, TimingOnlyModeKeepsEveryTime) {
  const compiler::CollectiveSpec c = allreduce(4, 513);
  SystemOptions opt;
  opt.timing_only = true;
  const Outcome values = run_timed(ring(2, 2), c), timing = run_timed(ring(2, 2), c, opt);
  EXPECT_EQ(values.end, timing.end);
}

TEST(System, BarrierPlacementsGiveTheSameValuesAndBothIsSlowest) {
  const compiler::CollectiveSpec c = allreduce(4, 100);
  std::vector<Outcome> runs;
  for (BarrierPlacement b : {BarrierPlacement::kComputeToExchange,
                             BarrierPlacement::kExchangeToCompute, BarrierPlacement::kBoth}) {
    SystemSpec s = ring(4, 1);
    s.barrier_placement = b;
    runs.push_back(run_timed(s, c));
  }
  EXPECT_EQ(runs[0].vectors, runs[2].vectors);
  EXPECT_EQ(runs[1].vectors, runs[2].vectors);
  EXPECT_GT(runs[2].end, runs[0].end);
  EXPECT_GT(runs[2].end, runs[1].end);
}

// One sync, no sends: with the barrier only at compute -> exchange, every core resumes at the
// barrier: arrival (sync issued at cycle 0: 1 cycle) + barrier latency; halt issues there.
TEST(System, AnEmptySuperstepCostsTheBarrierLatency) {
  SystemSpec s = ring(2, 1);
  s.barrier_placement = BarrierPlacement::kComputeToExchange;
  s.barrier_latency_ns = 1000;
  System sys(small_spec(), s, isa::assemble("sync\nhalt\n"));
  sys.run();
  const int64_t resume = sys.ps_to_cycles(sys.cycles_to_ps(1) + 1'000'000);
  EXPECT_EQ(resume, 701);  // 700 MHz: 1 cycle + 700 cycles
  EXPECT_EQ(sys.core(0).cycles(), resume + 1);
  EXPECT_EQ(sys.core(1).stall_cycles(core::StallCause::Exchange), resume - 1);
}

TEST(System, bad_send_to_a_processor_that_does_not_exist_names_processor_and_bundle) {
  System sys(small_spec(), ring(2, 2),
             isa::assemble("sli s1, 4 ;; sli s2, 1\nxsend s2, s2, s2, s1\nsync\nhalt\n"));
  EXPECT_EQ(testing::error_of([&] { sys.run(); }),
            "processor 0 (chip 0, core 0): simulated fault at pc 1 cycle 1 [xsend s2, s2, s2, s1]: "
            "xsend: processor 4 "
            "does not exist (processors 0..3)");
}

TEST(System, bad_per_processor_program_count) {
  std::vector<isa::Program> one = {isa::assemble("halt\n")};
  EXPECT_EQ(testing::error_of([&] { System(small_spec(), ring(2, 1), one); }),
            "system: 1 programs for 2 processors");
}

}  // namespace
}  // namespace tessera::system
