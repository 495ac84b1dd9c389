// cli/bench/harness.h: the statistics and the order in which interleave runs its contenders.
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "cli/bench/harness.h"

namespace tessera::bench {
namespace {

TEST(BenchHarness, MedianIsTheMiddleSampleOrTheMeanOfTheMiddleTwo) {
  EXPECT_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_EQ(minimum({3.0, 1.0, 2.0}), 1.0);
  EXPECT_EQ(sum({1.0, 2.0, 3.0}), 6.0);
  EXPECT_EQ(mean({1.0, 2.0, 3.0}), 2.0);
}

TEST(BenchHarness, InterleaveWarmsUpThenRunsEveryContenderOncePerRoundInOrder) {
  using Event = std::pair<char, int>;  // (what ran: setup of a, a, b; round)
  std::vector<Event> log;
  Contender a, b;
  a.setup = [&](int round) { log.emplace_back('s', round); };
  a.run = [&](int round) { log.emplace_back('a', round); };
  a.warm_up = true;
  b.run = [&](int round) { log.emplace_back('b', round); };
  b.rounds = 1;
  interleave(3, {&a, &b});
  const std::vector<Event> want = {{'s', -1}, {'a', -1}, {'s', 0}, {'a', 0}, {'b', 0},
                                   {'s', 1},  {'a', 1},  {'s', 2}, {'a', 2}};
  EXPECT_EQ(log, want);
  EXPECT_EQ(a.seconds.size(), 3u);  // the warm-up is not a sample
  EXPECT_EQ(b.seconds.size(), 1u);
}

TEST(BenchHarness, BestOfRunsTheSetupBeforeEveryRunAndKeepsTheFastest) {
  int setups = 0, runs = 0;
  const Timing t = best_of(
      4, [&] { ++setups; }, [&] { ++runs; });
  EXPECT_EQ(setups, 4);
  EXPECT_EQ(runs, 4);
  EXPECT_GE(t.cpu, 0.0);
  EXPECT_LT(t.cpu, 1.0);
}

}  // namespace
}  // namespace tessera::bench
