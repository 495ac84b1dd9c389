// The inter-chip packet fabric: exchange blocks, routers, links. Its users (the BSP machine, the
// fabric benchmarks) post a superstep's transfers and drain them; the machine is described by a
// FabricSpec (fabric/fabric_spec.h).
//
// A Transfer is one core -> core message. Between chips it is split into packets of
// spec.packet_payload_bytes (plus spec.packet_header_bytes on the wire), streamed by the source
// chip's exchange block (XB) under the XREQ / XON / XOFF protocol of docs/system.md, routed hop
// by hop with the static tables of fabric/routing.h, carried by links with bandwidth, latency,
// half/full duplex, bounded queues and seeded loss, acknowledged and retransmitted, and reassembled
// at the destination in any arrival order. Between the cores of ONE chip a transfer takes the
// time-deterministic on-chip path (no header): onchip_latency + bytes / onchip bandwidth.
//
// Protocol and timing model (all times integer picoseconds, so runs are bit-reproducible):
// - post(ready, t): at `ready` the source core announces t to its XB (XREQ). The XB grants XON to
//   one core at a time (cores in index order, round robin); the granted core streams the packets
//   of all its announced transfers, interleaved one packet per transfer in post order, into the
//   output queue of the link its routing table names, instantly (the on-chip path is not the
//   bottleneck). When the next packet's queue has no free slot the XB sends XOFF; when a slot
//   frees, XON. When the core has nothing left it gets XOFF and the next core gets XON.
// - A link's output queue holds spec.queue_packets packets: waiting to be sent or sent and not yet
//   acknowledged. The XB may fill it only up to queue_packets - reserve (reserve = max(1, Q/4)
//   slots kept for packets in transit, so through traffic is never starved by local traffic).
// - Sending a packet of p payload + h header bytes holds the link (full duplex: its direction;
//   half duplex: the one wire) for transfer_ps(p + h); it arrives link_latency later. With
//   probability loss_rate (SplitMix64 per link, seeded from `seed` and the link) it is dropped on
//   the wire. A packet that arrives where its next queue is full is refused (not acknowledged).
//   An accepted packet is acknowledged; the ack reaches the sender link_latency later (acks
//   travel out of band: no bandwidth, never lost) and frees the sender's slot. A packet not
//   acknowledged ack_timeout after it left is sent again ahead of new packets. The receiver keeps
//   a bitmap per transfer and discards duplicates: nothing is lost or duplicated.
// - A transfer has arrived when its last missing packet arrives; Arrival::time is that time.
// - Between drains the fabric is empty, so a later post may be ready before now() (a core that
//   finished its compute early); each wire still stays busy until the end of its last transmission.
// - Watchdog: if for spec.watchdog_us of simulated time no packet is accepted anywhere (or no
//   event is left while transfers are pending), drain() throws tessera::Error naming the waiting
//   transfers (source, destination, packets delivered) and the links holding packets.
//
// Contract changes are additive only; additions so far: Transfer::phantom_words (timing-only
// transfers for benchmarks), Fabric::now(), Fabric::routing(), Fabric::save_state/restore_state,
// Fabric::set_workers, Fabric::set_ranks/share_state/host_time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabric/fabric_spec.h"
#include "fabric/routing.h"
#include "fabric/stats.h"

namespace tessera {
class RankGroup;
class ThreadPool;
}  // namespace tessera

namespace tessera::fabric {

struct Endpoint {
  int chip = 0;
  int core = 0;
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

enum class Combine : uint8_t { kStore, kAdd, kMax };  // what the receiver does with the words

struct Transfer {  // one core->core message (a send instruction's region)
  Endpoint src, dst;
  uint64_t dst_addr = 0;  // word address in the destination core's vector memory
  Combine combine = Combine::kStore;
  std::vector<uint32_t> words;  // payload (fp32 bit patterns or int32)
  uint64_t id = 0;              // sender-assigned, deterministic; unique per (src, superstep)
  // Additive: when `words` is empty, a timing-only transfer of this many words (benchmarks).
  uint64_t phantom_words = 0;
  uint64_t size_words() const { return words.empty() ? phantom_words : words.size(); }
};

struct Arrival {  // fully reassembled at dst
  Transfer transfer;
  Picos time = 0;
};

class Engine;

class Fabric {
 public:
  // Builds the routing tables (throws tessera::Error for an invalid spec or an unreachable chip).
  Fabric(const FabricSpec& spec, uint64_t seed);
  ~Fabric();
  Fabric(Fabric&&) noexcept;
  Fabric& operator=(Fabric&&) noexcept;

  // Queue a transfer at the source chip's exchange block, available from time `ready`
  // (see "Between drains" above). Throws tessera::Error for an endpoint outside the system.
  void post(Picos ready, Transfer t);
  // Simulate until every posted transfer has arrived (packets, links, loss + retransmission,
  // XREQ/XON/XOFF); return the arrivals sorted by (time, dst, src, id). If nothing moves for the
  // watchdog limit, throw tessera::Error naming the waiting parties (never hang).
  std::vector<Arrival> drain();
  // Per link and per chip: bytes, packets, retransmissions, queue occupancy (max/mean), XOFF time,
  // busy time; accumulated over every drain() since construction.
  const FabricStats& stats() const;
  // Time of the last arrival of the last drain() (0 before the first).
  Picos now() const;
  const Routing& routing() const;
  const FabricSpec& spec() const;
  // Host threads for drain() (nullptr, the default: the calling thread alone). With two or more
  // threads, a full-duplex fabric with a positive link latency is split into that many partitions
  // of consecutive chips (at most one per chip), each simulated by one thread in windows of one
  // link latency (fabric/engine.h "Partitions"); arrivals, times and statistics are the same for
  // any number of threads. The pool must outlive the fabric's drains and not run another phase
  // during one.
  void set_workers(ThreadPool* pool);
  // The ranks that simulate this fabric together (nullptr, the default: this process alone; see
  // fabric/engine.h "Ranks"). Every rank posts every transfer (a transfer's words may be left out
  // where its destination's values are not needed) and drains collectively; each simulates the
  // events of its own block of chips, and the arrivals, times and statistics are the same for any
  // number of ranks. Between drains each rank's statistics are current for its own chips and
  // their links only until share_state. The group must outlive the fabric's drains.
  void set_ranks(RankGroup* ranks);
  // Collective over the ranks (no-op for one): every rank then holds the whole fabric's statistics
  // and the state save_state writes.
  void share_state();
  // Host time of the windowed drains so far (reports only).
  const FabricHostTime& host_time() const;

  // Checkpoints, between drains only (Error otherwise: nothing may be posted or in flight). The
  // state is everything a later drain depends on plus the statistics: now(), per link direction
  // its loss stream (SplitMix64 state) and queue-occupancy integral,
  // per wire its busy-until time and the direction it sent last, and every FabricStats field.
  // Between drains every queue, wire and exchange block is idle, which save_state checks. Doubles
  // are stored as IEEE-754 bit patterns, so a restored fabric continues bit for bit. The packet
  // pool is not saved: packet numbers are storage slots and never order anything.
  // restore_state needs a fabric built from the same spec (channel, wire, link and chip counts
  // are checked); errors name `where`.
  nlohmann::ordered_json save_state() const;
  void restore_state(const nlohmann::ordered_json& state, const std::string& where);

 private:
  std::unique_ptr<Engine> m_engine;
};

}  // namespace tessera::fabric
