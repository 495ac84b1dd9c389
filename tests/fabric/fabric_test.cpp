// The packet fabric: exact single-transfer times, store-and-forward over hops, the on-chip path,
// one core streaming at a time, half vs full duplex, XOFF before overflow, loss + retransmission
// delivering everything once, determinism per seed, the ring all-reduce against its bound, the
// watchdog, bad endpoints.
#include "fabric/fabric.h"

#include <map>

#include <gtest/gtest.h>

#include "fabric/ring_allreduce.h"
#include "support/error_of.h"

namespace tessera::fabric {
namespace {

// 100 GB/s = 10 ps per byte: serialisation times are exact integers.
FabricSpec spec(Topology t, int chips) {
  FabricSpec s;
  s.chips = chips;
  s.topology = t;
  s.link_gbytes_per_s = 100;
  s.link_latency_ns = 500;
  s.ack_timeout_ns = 2000;
  s.packet_payload_bytes = 1024;
  s.packet_header_bytes = 32;
  s.queue_packets = 1024;
  return s;
}

Transfer transfer(int src, int dst, uint64_t words, uint64_t id, int src_core = 0,
                  int dst_core = 0) {
  Transfer t;
  t.src = {src, src_core};
  t.dst = {dst, dst_core};
  t.id = id;
  t.words.resize(words);
  for (uint64_t i = 0; i < words; ++i)
    t.words[i] = static_cast<uint32_t>(id * 1000003u + i * 2654435761u);
  return t;
}

constexpr Picos kLat = 500'000;
constexpr Picos kFull = (1024 + 32) * 10;  // a full packet on the wire

TEST(Fabric, SingleTransferTakesLatencyPlusSizeOverBandwidthWithHeaders) {
  Fabric f(spec(Topology::kLine, 2), 1);
  f.post(1000, transfer(0, 1, 10000, 7));  // 40000 B = 39 full packets + 64 B
  const auto a = f.drain();
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].time, 1000 + 39 * kFull + (64 + 32) * 10 + kLat);
  EXPECT_EQ(a[0].transfer.words, transfer(0, 1, 10000, 7).words);
  EXPECT_EQ(f.stats().links[f.routing().channel_between(0, 1)].wire_bytes, 40000u + 40 * 32);
  EXPECT_EQ(f.now(), a[0].time);
}

TEST(Fabric, MultiHopIsStoreAndForwardPipelined) {
  Fabric f(spec(Topology::kLine, 4), 1);
  f.post(0, transfer(0, 3, 256 * 20, 1));  // 20 full packets over 3 hops
  const auto a = f.drain();
  EXPECT_EQ(a[0].time, 20 * kFull + kLat + 2 * (kFull + kLat));
  EXPECT_EQ(f.stats().chips[1].packets_forwarded, 20u);
  EXPECT_EQ(f.stats().chips[2].packets_forwarded, 20u);
  EXPECT_EQ(f.stats().chips[3].packets_delivered, 20u);
}

TEST(Fabric, OnChipTransferIsTimeDeterministicWithoutHeaders) {
  FabricSpec s = spec(Topology::kLine, 2);
  s.cores_per_chip = 2;
  s.onchip_gbytes_per_s = 200;  // 5 ps per byte
  s.onchip_latency_ns = 50;
  Fabric f(s, 1);
  f.post(100, transfer(1, 1, 1000, 3, 0, 1));
  const auto a = f.drain();
  EXPECT_EQ(a[0].time, 100 + 50'000 + 4000 * 5);
  EXPECT_EQ(f.stats().packets, 0u);
}

TEST(Fabric, ExchangeBlockLetsOneCoreStreamAtATime) {
  FabricSpec s = spec(Topology::kLine, 2);
  s.cores_per_chip = 2;
  Fabric f(s, 1);
  f.post(0, transfer(0, 1, 256 * 10, 1, 1, 0));
  f.post(0, transfer(0, 1, 256 * 10, 2, 0, 1));
  const auto a = f.drain();
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].transfer.src.core,
            1);  // core 1 announced first: XON; core 0 after its last packet
  EXPECT_EQ(a[0].time, 10 * kFull + kLat);
  EXPECT_EQ(a[1].time, 20 * kFull + kLat);
}

TEST(Fabric, HalfDuplexSharesTheWireFullDuplexDoesNot) {
  for (const auto duplex : {Duplex::kFull, Duplex::kHalf}) {
    FabricSpec s = spec(Topology::kLine, 2);
    s.duplex = duplex;
    Fabric f(s, 1);
    f.post(0, transfer(0, 1, 256 * 10, 1));
    f.post(0, transfer(1, 0, 256 * 10, 2));
    const auto a = f.drain();
    if (duplex == Duplex::kFull) {
      EXPECT_EQ(a[0].time, 10 * kFull + kLat);
      EXPECT_EQ(a[1].time, 10 * kFull + kLat);
    } else {  // packets alternate on the one wire
      EXPECT_EQ(a[0].time, 19 * kFull + kLat);
      EXPECT_EQ(a[1].time, 20 * kFull + kLat);
    }
  }
}

TEST(Fabric, XoffEngagesBeforeTheQueueOverflowsAndTimeFollowsTheWindow) {
  FabricSpec s = spec(Topology::kLine, 2);
  s.queue_packets = 8;  // XB may fill 6; a slot is held for ser + round trip
  Fabric f(s, 1);
  f.post(0, transfer(0, 1, 256 * 100, 1));
  const auto a = f.drain();
  const ChipStats& c = f.stats().chips[0];
  EXPECT_GT(c.xoff_count, 0u);
  EXPECT_GT(c.xoff_ps, 0);
  for (const LinkStats& l : f.stats().links) EXPECT_LE(l.max_queue, 8);
  EXPECT_EQ(f.stats().links[0].max_queue, 6);
  // window-limited: 6 packets per (ser + 2 latency) instead of back to back
  EXPECT_GT(a[0].time, 100 * kFull + kLat);
  EXPECT_EQ(a[0].transfer.words, transfer(0, 1, 256 * 100, 1).words);
}

struct LossRun {
  std::vector<Arrival> arrivals;
  FabricStats stats;
};

LossRun all_to_all(double loss, uint64_t seed) {
  FabricSpec s = spec(Topology::kRing, 4);
  s.loss_rate = loss;
  s.queue_packets = 16;
  Fabric f(s, seed);
  uint64_t id = 0;
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b)
      if (a != b) f.post(0, transfer(a, b, 256 * 30 + 17 * id, id)), ++id;
  LossRun r;
  r.arrivals = f.drain();
  r.stats = f.stats();
  return r;
}

TEST(Fabric, FivePercentLossDeliversEverythingOnceWithIdenticalPayload) {
  const LossRun lossless = all_to_all(0, 5);
  const LossRun lossy = all_to_all(0.05, 5);
  ASSERT_EQ(lossy.arrivals.size(), 12u);
  std::map<uint64_t, int> seen;
  uint64_t packets = 0;
  for (const Arrival& a : lossy.arrivals) {
    ++seen[a.transfer.id];
    EXPECT_EQ(a.transfer.words, transfer(0, 0, 256 * 30 + 17 * a.transfer.id, a.transfer.id).words);
    packets += (a.transfer.words.size() + 255) / 256;
  }
  for (const auto& [id, n] : seen) EXPECT_EQ(n, 1) << id;
  uint64_t dropped = 0, retrans = 0, refused = 0, delivered = 0, duplicates = 0;
  for (const LinkStats& l : lossy.stats.links)
    dropped += l.dropped, retrans += l.retransmissions, refused += l.refused;
  for (const ChipStats& c : lossy.stats.chips)
    delivered += c.packets_delivered, duplicates += c.duplicates;
  EXPECT_GT(dropped, 0u);
  EXPECT_EQ(retrans, dropped + refused);
  EXPECT_EQ(delivered, packets);
  EXPECT_EQ(duplicates, 0u);
  EXPECT_GT(lossy.stats.end_ps, lossless.stats.end_ps);  // only time differs
}

TEST(Fabric, SameSeedSameTimesOtherSeedOtherTimes) {
  const LossRun a = all_to_all(0.05, 11), b = all_to_all(0.05, 11), c = all_to_all(0.05, 12);
  ASSERT_EQ(a.arrivals.size(), b.arrivals.size());
  for (size_t i = 0; i < a.arrivals.size(); ++i) {
    EXPECT_EQ(a.arrivals[i].time, b.arrivals[i].time);
    EXPECT_EQ(a.arrivals[i].transfer.id, b.arrivals[i].transfer.id);
  }
  EXPECT_EQ(a.stats.to_json(), b.stats.to_json());
  EXPECT_NE(a.stats.to_json(), c.stats.to_json());
}

TEST(Fabric, ArrivalsAreSortedByTimeDestinationSourceId) {
  const LossRun r = all_to_all(0.05, 3);
  for (size_t i = 1; i < r.arrivals.size(); ++i) {
    const auto key = [](const Arrival& a) {
      return std::make_tuple(a.time, a.transfer.dst.chip, a.transfer.dst.core, a.transfer.src.chip,
                             a.transfer.src.core, a.transfer.id);
    };
    EXPECT_LT(key(r.arrivals[i - 1]), key(r.arrivals[i]));
  }
}

TEST(Fabric, RingAllreduceIsWithinAFewPercentOfTheBandwidthBound) {
  FabricSpec s = spec(Topology::kRing, 8);
  s.queue_packets = 256;
  Fabric one(s, 1);
  const RingAllreduceResult r1 = run_ring_allreduce(one, 8 << 20, 1);
  EXPECT_EQ(r1.steps, 14);
  EXPECT_GE(r1.efficiency, 0.95);  // header overhead 32/1056 is most of the gap
  EXPECT_LE(r1.efficiency, 1.0);
  Fabric two(s, 1);
  const RingAllreduceResult r2 = run_ring_allreduce(two, 8 << 20, 2);
  EXPECT_LE(static_cast<double>(r2.sim_ps), 0.55 * static_cast<double>(r1.sim_ps));
  EXPECT_GE(r2.efficiency, 0.95);
}

TEST(Fabric, TorusRingOrderIsAHamiltonianCycleOfNeighbours) {
  FabricSpec s = spec(Topology::kTorus2d, 16);
  s.dims_x = s.dims_y = 4;
  const std::vector<int> order = ring_order(s);
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 16; ++i) EXPECT_EQ(sorted[i], i);
  for (int i = 0; i < 16; ++i) EXPECT_TRUE(s.linked(order[i], order[(i + 1) % 16])) << i;
}

TEST(Fabric, TotalLossTripsTheWatchdogNamingTheWaitingParties_bad) {
  FabricSpec s = spec(Topology::kLine, 2);
  s.loss_rate = 1;
  s.watchdog_us = 10;
  Fabric f(s, 1);
  f.post(0, transfer(0, 1, 10, 4));
  EXPECT_EQ(
      testing::error_of([&] { f.drain(); }),
      "fabric at 8003600 ps: no packet moved for 10 us of simulated time; transfer 4 chip 0 core 0 "
      "-> "
      "chip 1 core 0 waits (0/1 packets delivered); link 0->1 holds 1 packets (4 retransmissions)");
}

TEST(Fabric, ZeroCapacityQueueIsReportedNotHung_bad) {
  FabricSpec s = spec(Topology::kLine, 2);
  s.queue_packets = 0;
  Fabric f(s, 1);
  f.post(0, transfer(1, 0, 10, 9));
  EXPECT_EQ(testing::error_of([&] { f.drain(); }),
            "fabric at 0 ps: no event is left that could move a packet; transfer 9 chip 1 core 0 "
            "-> chip 0 core 0 "
            "waits (0/1 packets delivered); link 1->0 holds 0 packets (0 retransmissions)");
}

TEST(Fabric, EndpointOutsideTheSystem_bad) {
  Fabric f(spec(Topology::kRing, 4), 1);
  EXPECT_EQ(testing::error_of([&] { f.post(0, transfer(0, 17, 4, 2)); }),
            "fabric: transfer 2 from chip 0 core 0: destination chip 17 core 0 does not exist (the "
            "system has 4 "
            "chips x 1 cores)");
  EXPECT_EQ(testing::error_of([&] { f.post(0, transfer(0, 1, 4, 3, 1, 0)); }),
            "fabric: transfer 3 from chip 0 core 1: source chip 0 core 1 does not exist (the "
            "system has 4 chips "
            "x 1 cores)");
}

}  // namespace
}  // namespace tessera::fabric
