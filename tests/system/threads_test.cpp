// Host threads (system/system.h "Host threads"): the compute phases of a rank's processors run on
// T threads, and values, cycle counts, times, statistics and errors are the same for every T.
#include <bit>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "compiler/collectives.h"
#include "isa/assembler.h"
#include "support/error_of.h"
#include "system/small_spec.h"
#include "system/system.h"

namespace tessera::system {
namespace {

SystemSpec lossy_ring(int chips, int cores) {
  SystemSpec s = small_ring(chips, cores);
  s.loss_rate = 0.05;
  return s;
}

struct Outcome {
  std::vector<std::vector<uint32_t>> vectors;
  std::vector<int64_t> cycles, exchange_stalls;
  std::string stats;
};

Outcome run_with_threads(int threads, bool split_phase) {
  compiler::CollectiveSpec c;
  c.processors = 8;
  c.words = 333;
  c.base = 8;
  c.directions = 2;
  c.split_phase = split_phase;
  SystemOptions o;
  o.seed = 5;
  o.threads = threads;
  System sys(small_spec(), lossy_ring(4, 2), compiler::collective_program(c), o);
  for (int p = 0; p < c.processors; ++p)
    for (uint32_t i = 0; i < c.words; ++i)
      sys.core(p).host_state().vmem[c.base + i] =
          std::bit_cast<uint32_t>(static_cast<float>(p * 131 + i) * 0.21f);
  sys.run();
  EXPECT_EQ(sys.threads(), threads);
  Outcome r;
  for (int p = 0; p < c.processors; ++p) {
    const uint32_t* v = sys.core(p).state().vmem.data() + c.base;
    r.vectors.emplace_back(v, v + c.words);
    r.cycles.push_back(sys.core(p).cycles());
    r.exchange_stalls.push_back(sys.core(p).stall_cycles(core::StallCause::Exchange));
  }
  r.stats = sys.stats_json().dump();
  return r;
}

TEST(SystemThreads, AllReduceUnderLossIsBitIdenticalForOneTwoAndThreeThreads) {
  for (bool split : {false, true}) {
    const Outcome one = run_with_threads(1, split);
    for (int threads : {2, 3}) {
      const Outcome got = run_with_threads(threads, split);
      EXPECT_EQ(got.vectors, one.vectors) << threads << " threads, split " << split;
      EXPECT_EQ(got.cycles, one.cycles) << threads << " threads, split " << split;
      EXPECT_EQ(got.exchange_stalls, one.exchange_stalls) << threads << " threads";
      EXPECT_EQ(got.stats, one.stats) << threads << " threads, split " << split;
    }
  }
}

TEST(SystemThreads, HostReportHasEveryThreadsBusyAndWaitingTime) {
  SystemOptions o;
  o.threads = 3;
  System sys(small_spec(), lossy_ring(2, 2), isa::assemble("sync\nsync\nhalt\n"), o);
  sys.run();
  const nlohmann::ordered_json h = sys.host_json();
  EXPECT_EQ(h.at("threads"), 3);
  EXPECT_EQ(h.at("ranks"), 1);
  EXPECT_EQ(h.at("compute_phases"), 4);  // building the cores, two syncs, then the halt
  EXPECT_EQ(h.at("messages_between_ranks"), 0);
  ASSERT_EQ(h.at("per_rank").size(), 1u);
  EXPECT_EQ(h["per_rank"][0].at("thread_busy_seconds").size(), 3u);
  EXPECT_EQ(h["per_rank"][0].at("thread_wait_seconds").size(), 3u);
  EXPECT_EQ(h["per_rank"][0].at("thread_cpu_seconds").size(), 3u);
  EXPECT_GT(h["per_rank"][0].at("peak_rss_bytes").get<int64_t>(), 0);
  EXPECT_EQ(h["per_rank"][0].at("exchange_wait_seconds").get<double>(), 0.0);  // one rank
  // The phases' achieved speed-up: busy seconds of every thread over the phases' wall seconds.
  const double phases = h.at("parallel_phase_seconds").get<double>();
  EXPECT_EQ(h["per_rank"][0].at("phase_seconds").get<double>(), phases);
  double busy = 0;
  for (const auto& b : h["per_rank"][0]["thread_busy_seconds"]) busy += b.get<double>();
  EXPECT_GT(phases, 0.0);
  EXPECT_DOUBLE_EQ(h.at("parallel_speedup").get<double>(), busy / phases);
}

TEST(SystemThreads, bad_faults_of_several_processors_name_the_lowest_for_every_thread_count) {
  // Every processor sends to processor 4, which does not exist: all fault in the same phase.
  for (int threads : {1, 2, 3}) {
    SystemOptions o;
    o.threads = threads;
    System sys(small_spec(), lossy_ring(2, 2),
               isa::assemble("sli s1, 4 ;; sli s2, 1\nxsend s2, s2, s2, s1\nsync\nhalt\n"), o);
    EXPECT_EQ(testing::error_of([&] { sys.run(); }),
              "processor 0 (chip 0, core 0): simulated fault at pc 1 cycle 1 [xsend s2, s2, s2, "
              "s1]: xsend: processor 4 does not exist (processors 0..3)")
        << threads << " threads";
  }
}

TEST(SystemThreads, bad_thread_count) {
  SystemOptions o;
  o.threads = 0;
  EXPECT_EQ(testing::error_of(
                [&] { System(small_spec(), lossy_ring(2, 1), isa::assemble("halt\n"), o); }),
            "threads: 0 threads: need at least 1");
}

}  // namespace
}  // namespace tessera::system
