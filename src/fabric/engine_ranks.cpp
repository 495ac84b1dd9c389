// The engine's partitions over host threads and ranks (fabric/engine.h "Partitions", "Ranks"):
// which partition simulates which chip, the conservative windows, the events and progress handed
// over between them, and the state the ranks share after a drain.
//
// Messages between ranks (native byte order, common/byte_codec.h):
//   window end, to each other rank: Progress, then the Handoffs for that rank's chips;
//   drain end (allgather): the done time of every transfer to this rank's chips, in post order;
//   share_state (allgather), for this rank's chips in chip order, then its channels, wires and
//   transfers in index order: ChipStats; per channel from one of its chips: the channel's
//   occupancy, XB wait, occupancy integral and its time, loss stream, LinkStats; per channel to
//   one of its chips: the receiver's payload bytes and refusals; per wire it sends on: busy, busy
//   until, last direction; per transfer to one of its chips: packets delivered, done time; then
//   the events and transmissions it ran since the last share_state.
#include <algorithm>
#include <chrono>
#include <limits>
#include <type_traits>

#include "common/byte_codec.h"
#include "common/error.h"
#include "fabric/engine.h"

namespace tessera::fabric {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

void Engine::Progress::add(const Progress& o) {
  first = std::min(first, o.first);
  pending += o.pending;
  progress = std::max(progress, o.progress);
  now = std::max(now, o.now);
  last_arrival = std::max(last_arrival, o.last_arrival);
}

void Engine::set_workers(ThreadPool* pool) {
  m_pool = pool;
}

bool Engine::partitionable() const {
  return m_spec.duplex == Duplex::kFull && m_latency_ps > 0 && m_spec.chips >= 2;
}

void Engine::set_ranks(RankGroup* ranks) {
  m_ranks = ranks;
  m_rank = ranks != nullptr ? ranks->rank() : 0;
  m_rank_count = ranks != nullptr ? ranks->size() : 1;
  m_split = m_rank_count > 1 && partitionable();
  m_chip_rank.assign(static_cast<size_t>(m_spec.chips), m_rank);
  if (m_split)
    for (int c = 0; c < m_spec.chips; ++c)
      m_chip_rank[static_cast<size_t>(c)] = rank_of_item(c, m_spec.chips, m_rank_count);
  const auto& chans = m_routing.channels();
  for (size_t c = 0; c < chans.size(); ++c) {  // a queue only where its sending chip is
    std::vector<uint32_t>& ring = m_channel[c].ring;
    if (owns(chans[c].from))
      ring.resize(static_cast<size_t>(std::max(1, m_spec.queue_packets)));
    else
      std::vector<uint32_t>().swap(ring);
  }
}

void Engine::plan_partitions() {
  const int threads = m_pool != nullptr ? m_pool->threads() : 1;
  m_windowed = partitionable() && (m_split || threads >= 2);
  const RankBlock mine =
      m_split ? rank_block(m_spec.chips, m_rank_count, m_rank) : RankBlock{0, m_spec.chips};
  const size_t n = m_windowed ? static_cast<size_t>(std::min(threads, mine.count)) : 1;
  m_parts.resize(n);
  m_part_of.assign(static_cast<size_t>(m_spec.chips), 0);
  for (int c = mine.first; c < mine.first + mine.count; ++c)
    m_part_of[static_cast<size_t>(c)] =
        static_cast<size_t>(c - mine.first) * n / static_cast<size_t>(mine.count);
}

Engine::Progress Engine::local_progress() const {
  Progress p;
  for (const Part& P : m_parts) {
    if (!P.heap.empty()) p.first = std::min(p.first, P.heap.front().time);
    const auto earliest = [&](const std::vector<Handoff>& box) {
      for (const Handoff& h : box) p.first = std::min(p.first, h.e.time);
    };
    for (const auto& box : P.remote) earliest(box);
    for (const auto& box : P.in) earliest(box);
    earliest(P.from_ranks);
    p.pending += P.pending;
    p.progress = std::max(p.progress, P.last_progress);
    p.now = std::max(p.now, P.now);
    p.last_arrival = std::max(p.last_arrival, P.last_arrival);
  }
  return p;
}

// Conservative windows: every partition runs its events before the earliest pending event + one
// link latency (no event of another partition can reach it earlier), then the events handed over
// are passed to their partitions, which take them onto their heaps at the next window's start.
// The watchdog is checked between windows on the whole fabric, and a window never passes the time
// at which it would fire, so it fires exactly where one partition would have.
Engine::Progress Engine::run_partitions() {
  for (Progress all = exchange_window();; all = exchange_window()) {
    if (all.first == std::numeric_limits<Picos>::max()) return all;
    if (all.pending > 0 && all.first - all.progress > m_watchdog_ps)
      stuck_everywhere(
          all.now, fmt::format("no packet moved for {} us of simulated time", m_spec.watchdog_us));
    Picos horizon = all.first + m_latency_ps;
    if (all.pending > 0) horizon = std::min(horizon, all.progress + m_watchdog_ps + 1);
    run_window(horizon);
  }
}

void Engine::run_window(Picos horizon) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto body = [&](int k) {
    Part& P = m_parts[static_cast<size_t>(k)];
    take_inbox(P);
    run_part(P, horizon);
  };
  if (m_pool != nullptr)
    m_pool->run(static_cast<int>(m_parts.size()), body);
  else
    for (size_t k = 0; k < m_parts.size(); ++k) body(static_cast<int>(k));
  ++m_host.windows;
  m_host.busy_seconds += seconds_since(t0);
}

void Engine::receive(Part& P, const Handoff& h) {
  Event e = h.e;
  if (e.kind == Ev::kArrive || e.kind == Ev::kTimeout) {
    e.a = new_packet(P);
    P.packets[e.a] = h.pk;
  }
  push(P, e);
}

// The heap order makes the order of the pushes irrelevant: (time, origin, seq) is unique.
void Engine::take_inbox(Part& P) {
  for (auto& box : P.in) {
    for (const Handoff& h : box) receive(P, h);
    box.clear();
  }
  for (const Handoff& h : P.from_ranks) receive(P, h);
  P.from_ranks.clear();
}

Engine::Progress Engine::exchange_window() {
  for (size_t k = 0; k < m_parts.size(); ++k)  // the in boxes are empty: their tasks took them
    for (size_t j = 0; j < m_parts.size(); ++j) m_parts[k].in[j].swap(m_parts[j].out[k]);
  Progress all = local_progress();
  if (!m_split) return all;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<ByteWriter> to(static_cast<size_t>(m_rank_count));
  for (ByteWriter& w : to) w.put(all);
  for (Part& P : m_parts)
    for (size_t r = 0; r < P.remote.size(); ++r) {
      to[r].append(P.remote[r].data(), P.remote[r].size() * sizeof(Handoff));
      P.remote[r].clear();
    }
  std::vector<Bytes> out(to.size());
  for (size_t r = 0; r < to.size(); ++r)
    if (static_cast<int>(r) != m_rank) out[r] = std::move(to[r].bytes());
  const std::vector<Bytes> in = m_ranks->alltoall(out);
  m_host.wait_seconds += seconds_since(t0);
  for (int r = 0; r < m_rank_count; ++r) {
    if (r == m_rank) continue;
    ByteReader rd(in[static_cast<size_t>(r)]);
    all.add(rd.get<Progress>());
    while (!rd.done()) {
      const Handoff h = rd.get<Handoff>();
      m_parts[m_part_of[h.chip]].from_ranks.push_back(h);
    }
  }
  return all;
}

void Engine::share_arrival_times() {
  ByteWriter mine;
  for (const TransferState& s : m_transfers)
    if (owns(s.t.dst.chip)) mine.put(s.done_time);
  const std::vector<Bytes> all = m_ranks->allgather(mine.bytes());
  for (int r = 0; r < m_rank_count; ++r) {
    if (r == m_rank) continue;
    ByteReader in(all[static_cast<size_t>(r)]);
    for (TransferState& s : m_transfers)
      if (m_chip_rank[static_cast<size_t>(s.t.dst.chip)] == r) s.done_time = in.get<Picos>();
    TESSERA_CHECK(in.done(), "fabric: arrival times of another rank do not match its transfers");
  }
}

void Engine::stuck_everywhere(Picos now, const std::string& why) {
  share_state();
  stuck(now, why);
}

void Engine::share_state() {
  if (!m_split) return;
  const auto& chans = m_routing.channels();
  // Calls f(value) for every field rank r holds, in the order of the message (above).
  const auto each_field = [&](int r, auto&& f) {
    const auto of = [&](int chip) { return m_chip_rank[static_cast<size_t>(chip)] == r; };
    for (int c = 0; c < m_spec.chips; ++c)
      if (of(c)) f(m_stats.chips[static_cast<size_t>(c)]);
    for (size_t c = 0; c < chans.size(); ++c) {
      ChannelState& cs = m_channel[c];
      LinkStats& l = m_stats.links[c];
      if (of(chans[c].from)) {
        const uint64_t payload = l.payload_bytes, refused = l.refused;
        uint64_t rng = cs.rng.state();
        f(cs.occupancy), f(cs.xb_waiting), f(cs.occ_integral), f(cs.occ_since), f(rng), f(l);
        cs.rng = SplitMix64(rng);
        if (!of(chans[c].to)) l.payload_bytes = payload, l.refused = refused;
      }
      if (of(chans[c].to) && !of(chans[c].from)) f(l.payload_bytes), f(l.refused);
    }
    for (const Channel& ch : chans)
      if (of(ch.from)) {
        WireState& w = m_wire[static_cast<size_t>(ch.wire)];
        f(w.busy), f(w.free_at), f(w.last);
      }
    for (TransferState& s : m_transfers)
      if (of(s.t.dst.chip)) f(s.delivered), f(s.done_time);
  };
  ByteWriter mine;
  each_field(m_rank, [&](auto& v) { mine.put(v); });
  mine.put(m_rank_events);
  mine.put(m_rank_packets);
  const std::vector<Bytes> all = m_ranks->allgather(mine.bytes());
  for (int r = 0; r < m_rank_count; ++r) {
    if (r == m_rank) {
      m_stats.events += m_rank_events;
      m_stats.packets += m_rank_packets;
      continue;
    }
    ByteReader in(all[static_cast<size_t>(r)]);
    each_field(r, [&](auto& v) { v = in.get<std::remove_reference_t<decltype(v)>>(); });
    m_stats.events += in.get<uint64_t>();
    m_stats.packets += in.get<uint64_t>();
    TESSERA_CHECK(in.done(), "fabric: another rank's state does not match its chips");
  }
  m_rank_events = m_rank_packets = 0;
}

}  // namespace tessera::fabric
