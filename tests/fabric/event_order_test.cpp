// The fabric engine's same-time ordering (fabric/engine.h): on a full-duplex fabric equal-time
// events are ordered by the chip that scheduled them and that chip's own count, never by the order
// in which the whole system inserted them. So a drain's arrivals, times and statistics do not
// depend on how the posts of different chips are interleaved (only each chip's own post order
// counts), with loss and retransmission, and across several drains; and a fabric split into
// partitions simulated by several threads (Fabric::set_workers) gives the same arrivals, times,
// statistics and watchdog errors as one, and so does a fabric whose chips are split over ranks
// (Fabric::set_ranks; the ranks here are threads: system/mpi_thread_communicator.h), on every
// rank.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/thread_pool.h"
#include "fabric/fabric.h"
#include "support/error_of.h"
#include "system/mpi_thread_communicator.h"

namespace tessera::fabric {
namespace {

FabricSpec torus(double loss) {
  FabricSpec s;
  s.chips = 16;
  s.topology = Topology::kTorus2d;
  s.dims_x = 4;
  s.dims_y = 4;
  s.link_gbytes_per_s = 100;  // 10 ps per byte: many equal-time events
  s.link_latency_ns = 500;
  s.ack_timeout_ns = 2000;
  s.packet_payload_bytes = 1024;
  s.packet_header_bytes = 32;
  s.queue_packets = 16;  // small queues: XOFF, refusals and retransmissions
  s.loss_rate = loss;
  return s;
}

// Every chip (x, y) sends to (x + 1, y + 1), (x, y + 2) and (x + 2, y), all ready at the same
// time, per chip in that order. Dimension order routes (x - 1, y) -> (x, y + 1) and
// (x, y - 1) -> (x, y + 1) both through (x, y) onto the same link, and their first packets reach
// (x, y) at the same time: which goes first depends on the same-time order alone.
std::vector<std::vector<Transfer>> posts_per_chip() {
  std::vector<std::vector<Transfer>> out(16);
  uint64_t id = 0;
  for (int c = 0; c < 16; ++c)
    for (const auto& [dx, dy] : {std::pair{1, 1}, std::pair{0, 2}, std::pair{2, 0}}) {
      Transfer t;
      t.src = {c, 0};
      t.dst = {(c % 4 + dx) % 4 + 4 * ((c / 4 + dy) % 4), 0};
      t.id = id++;
      t.words.assign(256 * 7, static_cast<uint32_t>(t.id));
      out[static_cast<size_t>(c)].push_back(std::move(t));
    }
  return out;
}

struct Drains {
  std::vector<std::pair<Picos, uint64_t>> arrivals;  // (time, id) in the drain's order
  nlohmann::ordered_json stats;
};

// Two drains; in each, chip order `chips` with the chips' posts interleaved round robin (one post
// of each chip in turn) or chip after chip; on `workers` threads (nullptr: one partition) of one
// of `ranks` (nullptr: this process alone).
Drains run(double loss, const std::vector<int>& chips, bool interleave,
           ThreadPool* workers = nullptr, RankGroup* ranks = nullptr) {
  Fabric f(torus(loss), 7);
  f.set_workers(workers);
  f.set_ranks(ranks);
  Drains r;
  for (int drain = 0; drain < 2; ++drain) {
    const auto posts = posts_per_chip();
    const Picos ready = f.now() + 1000;
    if (interleave) {
      for (size_t k = 0; k < 3; ++k)
        for (int c : chips) f.post(ready, posts[static_cast<size_t>(c)][k]);
    } else {
      for (int c : chips)
        for (const Transfer& t : posts[static_cast<size_t>(c)]) f.post(ready, t);
    }
    for (const Arrival& a : f.drain()) r.arrivals.emplace_back(a.time, a.transfer.id);
  }
  f.share_state();
  r.stats = f.stats().to_json();
  return r;
}

TEST(FabricEventOrder, ArrivalsAndStatisticsDoNotDependOnHowChipsInterleaveTheirPosts) {
  std::vector<int> up(16), down(16);
  for (int c = 0; c < 16; ++c)
    up[static_cast<size_t>(c)] = c, down[static_cast<size_t>(c)] = 15 - c;
  std::vector<int> shuffled = {3, 14, 0, 9, 7, 12, 1, 15, 5, 10, 2, 8, 13, 4, 11, 6};
  for (double loss : {0.0, 0.05}) {
    const Drains want = run(loss, up, false);
    EXPECT_EQ(want.arrivals.size(), 2u * 48u);
    for (const auto& [chips, interleave] :
         {std::pair{up, true}, std::pair{down, false}, std::pair{down, true},
          std::pair{shuffled, false}, std::pair{shuffled, true}}) {
      const Drains got = run(loss, chips, interleave);
      EXPECT_EQ(got.arrivals, want.arrivals) << "loss " << loss << " interleave " << interleave;
      EXPECT_EQ(got.stats, want.stats) << "loss " << loss << " interleave " << interleave;
    }
  }
}

TEST(FabricEventOrder, PartitionsOnSeveralThreadsGiveTheSameArrivalsTimesAndStatistics) {
  std::vector<int> up(16);
  for (int c = 0; c < 16; ++c) up[static_cast<size_t>(c)] = c;
  for (double loss : {0.0, 0.05}) {
    const Drains want = run(loss, up, true);
    for (int threads : {1, 2, 3, 5, 16, 20}) {
      ThreadPool pool(threads);
      const Drains got = run(loss, up, true, &pool);
      EXPECT_EQ(got.arrivals, want.arrivals) << "loss " << loss << ", " << threads << " threads";
      EXPECT_EQ(got.stats, want.stats) << "loss " << loss << ", " << threads << " threads";
    }
  }
}

TEST(FabricEventOrder,
     RanksSimulatingTheirOwnChipsGiveTheSameArrivalsTimesAndStatisticsOnEachRank) {
  std::vector<int> up(16);
  for (int c = 0; c < 16; ++c) up[static_cast<size_t>(c)] = c;
  for (double loss : {0.0, 0.05}) {
    const Drains want = run(loss, up, true);
    for (const std::pair<int, int>& layout :  // (ranks, threads); 20 ranks: some own no chip
         {std::pair{2, 1}, std::pair{2, 2}, std::pair{3, 1}, std::pair{3, 2}, std::pair{5, 2},
          std::pair{20, 1}}) {
      const int ranks = layout.first, threads = layout.second;
      const std::vector<Drains> got =
          system::on_thread_ranks<Drains>(ranks, [&](system::Communicator& comm) {
            ThreadPool pool(threads);
            return run(loss, up, true, &pool, &comm);
          });
      for (int r = 0; r < ranks; ++r) {
        const Drains& g = got[static_cast<size_t>(r)];
        EXPECT_EQ(g.arrivals, want.arrivals) << "loss " << loss << ", rank " << r << " of " << ranks
                                             << ", " << threads << " threads";
        EXPECT_EQ(g.stats, want.stats) << "loss " << loss << ", rank " << r << " of " << ranks
                                       << ", " << threads << " threads";
      }
    }
  }
}

TEST(FabricEventOrder, PartitionsTripTheWatchdogWhereOnePartitionDoes_bad) {
  const auto stuck = [](ThreadPool* workers, RankGroup* ranks = nullptr) {
    FabricSpec s = torus(1.0);  // every packet lost
    s.watchdog_us = 20;
    Fabric f(s, 1);
    f.set_workers(workers);
    f.set_ranks(ranks);
    for (const auto& chip : posts_per_chip())
      for (const Transfer& t : chip) f.post(0, t);
    return testing::error_of([&] { f.drain(); });
  };
  const std::string want = stuck(nullptr);
  EXPECT_NE(want.find("no packet moved for 20 us"), std::string::npos) << want;
  for (int threads : {2, 3, 16}) {
    ThreadPool pool(threads);
    EXPECT_EQ(stuck(&pool), want) << threads << " threads";
  }
  for (int ranks : {2, 3}) {
    const std::vector<std::string> got =
        system::on_thread_ranks<std::string>(ranks, [&](system::Communicator& comm) {
          ThreadPool pool(2);
          return stuck(&pool, &comm);
        });
    for (const std::string& g : got) EXPECT_EQ(g, want) << ranks << " ranks";
  }
}

}  // namespace
}  // namespace tessera::fabric
