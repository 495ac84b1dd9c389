// The fabric's discrete-event engine (internal to fabric/; the API is fabric.h, the protocol and
// timing model are documented there).
//
// Hot-path data layout: packets live in a pool (free list, no allocation per packet) and carry
// (transfer index, sequence number): the payload stays in the Transfer and a packet's words are
// words[seq * P, seq * P + len). Events are records in a binary heap ordered by (time, origin,
// origin sequence), so equal-time events run in a deterministic order. On a full-duplex fabric the
// origin is the chip whose event scheduled the event (for a drain's first events, the transfer's
// source chip) and the sequence counts the events that chip scheduled before in this drain. Every
// event there touches the state of one chip only (its owner: a transfer's source for kReady and
// kOnchipDone, a channel's sending chip for kWireFree, kAck and kTimeout, its receiving chip for
// kArrive), so equal-time events of different chips commute and the order of one chip's events
// depends only on its own history and its neighbours', never on the order in which the whole
// system inserted them: a partition of the chips would process them in the same order, handing
// events over at the link latency. On a half-duplex fabric both chips of a link share its wire,
// so there the origin is 0 for every event and the sequence is the drain's insertion number (the
// whole fabric is one ordering domain). Only events that matter are scheduled: a retransmission
// timeout exists only for a packet that was dropped or refused (acks are never lost and the
// timeout exceeds the round trip, so an accepted packet's timer could never fire).
//
// Partitions (Fabric::set_workers): with a pool of T >= 2 threads, a full-duplex fabric's chips are
// split into min(T, chips) partitions of consecutive chips, each with its own event heap, clock
// and packet pool; the state of a chip (its exchange block, its outgoing channels and wires, its
// half of each transfer and of each statistic) is touched only by its partition. An event for a
// chip of another partition (a packet's arrival, an ack, a refused packet's timeout) is handed
// over, with the packet it carries, at the end of the window. Every such event lies at least one
// link latency after the event that scheduled it (a refusal's timeout too: the ack timeout exceeds
// the round trip), so a window runs, on every partition at once, the events before the earliest
// pending event + one link latency: conservative synchronisation with the link latency as
// lookahead. The ordering key above makes each partition process its events in the order one
// partition would, so arrivals, times and statistics do not depend on T.
//
// Ranks (Fabric::set_ranks, engine_ranks.cpp): over R >= 2 ranks a full-duplex fabric's chips are
// split into rank_block(chips, R, r) (common/rank_group.h), and each rank splits its own block
// over its threads as above. Every rank is posted every transfer (the payload only where it has
// it), but runs the events of its own chips only: it holds only their events, packets, link
// queues and reassembly bitmaps. At each window's end the events for another rank's chips go to
// that rank in one all-to-all, together with each rank's progress (its earliest pending event,
// counting the ones it sends; its pending transfers; its last progress, clock and last arrival), so
// every rank computes the same next window, the same watchdog decision and the same end. At the end
// of a drain the ranks exchange the arrival times of their chips' transfers, so every rank returns
// every arrival. A chip's statistics and link state stay on its rank until share_state, which
// gives every rank the whole fabric's. A fabric that cannot be partitioned (half duplex, no link
// latency, one chip) is simulated whole by every rank.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/rank_group.h"
#include "common/splitmix64.h"
#include "common/thread_pool.h"
#include "fabric/fabric.h"
#include "fabric/routing.h"

namespace tessera::fabric {

class Engine {
 public:
  Engine(const FabricSpec& spec, uint64_t seed);

  void post(Picos ready, Transfer t);
  std::vector<Arrival> drain();

  const FabricSpec& spec() const { return m_spec; }
  const Routing& routing() const { return m_routing; }
  const FabricStats& stats() const { return m_stats; }
  Picos now() const { return m_now; }
  // The threads that simulate the partitions of a full-duplex fabric (nullptr: one partition).
  void set_workers(ThreadPool* pool);
  // The ranks that simulate this fabric together (nullptr or one rank: this process alone).
  void set_ranks(RankGroup* ranks);
  // Collective over the ranks: every rank then holds every chip's statistics and link state.
  void share_state();
  const FabricHostTime& host_time() const { return m_host; }

  // Checkpoints (fabric.h Fabric::save_state): engine_state.cpp.
  bool idle() const;  // nothing posted, no event pending, every queue, wire and XB idle
  nlohmann::ordered_json save_state() const;
  void restore_state(const nlohmann::ordered_json& state, const std::string& where);

 private:
  enum class Ev : uint32_t { kReady, kOnchipDone, kWireFree, kArrive, kAck, kTimeout };
  struct Event {
    Picos time;
    uint32_t origin;  // the ordering domain that scheduled it (above)
    Ev kind;
    uint64_t seq;  // events `origin` scheduled before it in this drain: (time, origin, seq) is
                   // unique and deterministic
    uint32_t a;
  };
  struct TransferState {
    Transfer t;
    Picos ready = 0;
    Picos done_time = -1;
    uint32_t packets = 0;
    uint32_t injected = 0;
    uint32_t delivered = 0;
    std::vector<uint64_t> got;  // reassembly bitmap, one bit per sequence number
  };
  struct Packet {
    uint32_t transfer = 0;
    uint32_t seq = 0;
    uint32_t channel = 0;  // the channel it is queued on / travelling over
    uint32_t bytes = 0;    // payload bytes
    Picos sent_end = 0;    // end of its last serialisation
    bool sent_on_hop = false;
  };
  struct ChannelState {
    std::vector<uint32_t> ring;  // packets waiting to be (re)sent: a deque of capacity Q
    uint32_t head = 0;
    uint32_t count = 0;
    int occupancy = 0;        // waiting + sent and unacknowledged
    bool xb_waiting = false;  // the source chip's XB sent XOFF because of this channel
    double occ_integral = 0;  // sum occupancy * dt (ps)
    Picos occ_since = 0;
    SplitMix64 rng{0};
  };
  struct WireState {
    int channels[2] = {-1, -1};
    int last = 0;
    bool busy = false;
    Picos free_at = 0;  // end of its last transmission (kept across drains)
  };
  struct ExchangeBlock {
    std::vector<std::vector<uint32_t>> active;  // per core: announced transfers not fully injected
    std::vector<uint32_t> rr;                   // per core: next transfer in `active` to take from
    int granted = -1;
    bool xoff = false;
    Picos xoff_since = 0;
  };

  // A partition's execution state ("Partitions" above): its events, its packets (slots in its
  // own pool), its clock and its progress; `out` holds events for other partitions' chips until
  // the window ends, with the packet they carry. At a window's end each `out` box is swapped
  // into its destination's `in` box (and events from other ranks are appended to `from_ranks`);
  // the destination's own task moves them onto its heap at the start of the next window, so a
  // partition's heap and packet pool are only ever written by the thread running it.
  struct Handoff {  // trivially copyable: it crosses ranks as bytes
    Event e;
    Packet pk;
    uint32_t chip;  // the chip whose state the event touches
  };
  // The ranks' view of a drain's progress, summed over partitions at a window's end.
  struct Progress {
    Picos first = std::numeric_limits<Picos>::max();  // earliest pending event (handed over too)
    uint64_t pending = 0;                             // transfers not yet arrived
    Picos progress = 0, now = 0, last_arrival = 0;    // latest of each over the partitions
    void add(const Progress& o);
  };
  struct Part {
    std::vector<Event> heap;
    std::vector<Packet> packets;
    std::vector<uint32_t> free_packets;
    Picos now = 0;
    Picos last_progress = 0;
    Picos last_arrival = 0;
    size_t pending = 0;  // transfers to its chips not yet arrived
    uint64_t events = 0, packets_sent = 0;
    int origin = 0;  // the ordering domain scheduling events now (the current event's)
    std::vector<std::vector<Handoff>> out;     // per local partition
    std::vector<std::vector<Handoff>> in;      // per local partition: its `out` box for this one
    std::vector<Handoff> from_ranks;           // events other ranks handed to this one's chips
    std::vector<std::vector<Handoff>> remote;  // per rank (events for other ranks' chips)
  };

  void schedule(Part& P, Picos t, Ev kind, uint32_t a);
  void push(Part& P, const Event& e);  // onto P's heap
  void run_event(Part& P, const Event& e);
  // The ordering domain of an event's effects: the chip whose state it touches, or 0 (above).
  int domain(const Part& P, const Event& e) const;
  int domain(int chip) const { return m_spec.duplex == Duplex::kFull ? chip : 0; }
  bool partitionable() const;
  // This drain's partitions of this rank's chips (m_parts, m_part_of).
  void plan_partitions();
  bool owns(int chip) const { return m_chip_rank[static_cast<size_t>(chip)] == m_rank; }
  // Runs P's events before `horizon`.
  void run_part(Part& P, Picos horizon);
  Progress local_progress() const;
  // Runs the windows until no event is left anywhere; returns the whole fabric's progress.
  Progress run_partitions();
  void run_window(Picos horizon);
  // Passes the events handed over between this rank's partitions to their in boxes, sends the
  // others to their ranks and queues theirs; returns every rank's progress combined
  // (engine_ranks.cpp).
  Progress exchange_window();
  // Moves the events handed to P at the last window's end onto its heap (P's own task).
  void take_inbox(Part& P);
  void receive(Part& P, const Handoff& h);
  // The arrival times of other ranks' chips' transfers (engine_ranks.cpp).
  void share_arrival_times();
  // share_state before an error that names other ranks' transfers and links.
  [[noreturn]] void stuck_everywhere(Picos now, const std::string& why);
  void on_ready(Part& P, uint32_t tr);
  void pump(Part& P, int chip);
  void grant_next(Part& P, int chip);
  void start_wire(Part& P, int wire);
  void on_arrive(Part& P, uint32_t pkt);
  void on_ack(Part& P, uint32_t channel);
  void on_timeout(Part& P, uint32_t pkt);
  void deliver(Part& P, uint32_t pkt);
  void enqueue(Part& P, uint32_t channel, uint32_t pkt, bool front);
  void set_occupancy(Part& P, uint32_t channel, int delta);
  void kick(Part& P, uint32_t channel);
  uint32_t new_packet(Part& P);
  [[noreturn]] void stuck(Picos now, const std::string& why) const;
  int inject_limit() const;

  FabricSpec m_spec;
  Routing m_routing;
  uint64_t m_seed;
  Picos m_now = 0;
  Picos m_latency_ps = 0;
  Picos m_timeout_ps = 0;
  Picos m_watchdog_ps = 0;
  std::vector<uint64_t> m_domain_seq;  // per domain: events it scheduled in this drain
  uint32_t m_words_per_packet = 1;
  ThreadPool* m_pool = nullptr;  // the workers of the partitions (set_workers)
  RankGroup* m_ranks = nullptr;  // set_ranks; null: this process alone
  int m_rank = 0, m_rank_count = 1;
  bool m_split = false;           // the chips are split over the ranks
  bool m_windowed = false;        // this drain runs in windows (several partitions or ranks)
  std::vector<int> m_chip_rank;   // per chip: its rank (this one for every chip unless split)
  std::vector<Part> m_parts;      // this drain's partitions of this rank's chips
  std::vector<size_t> m_part_of;  // per chip of this rank: its partition
  uint64_t m_rank_events = 0, m_rank_packets = 0;  // this rank's, since the last share_state
  FabricHostTime m_host;

  std::vector<TransferState> m_transfers;  // this drain's
  std::vector<ChannelState> m_channel;
  std::vector<WireState> m_wire;
  std::vector<ExchangeBlock> m_xb;
  FabricStats m_stats;
};

}  // namespace tessera::fabric
