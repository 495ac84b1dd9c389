#include "fabric/engine.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include <fmt/format.h>

#include "common/error.h"

namespace tessera::fabric {

namespace {

// The heap order: the earliest (time, origin, seq) on top.
constexpr auto later = [](const auto& x, const auto& y) {
  return std::tie(x.time, x.origin, x.seq) > std::tie(y.time, y.origin, y.seq);
};

uint64_t mix_seed(uint64_t seed, uint64_t channel) {
  SplitMix64 g(seed ^ (0x9e3779b97f4a7c15ull * (channel + 1)));
  return g.next();
}

}  // namespace

Engine::Engine(const FabricSpec& spec, uint64_t seed)
    : m_spec(spec), m_routing(spec), m_seed(seed) {
  TESSERA_CHECK(spec.link_gbytes_per_s > 0 && spec.onchip_gbytes_per_s > 0,
                "bandwidths must be positive");
  m_latency_ps = ns_to_ps(spec.link_latency_ns);
  m_timeout_ps = ns_to_ps(spec.ack_timeout_ns);
  m_watchdog_ps = ns_to_ps(spec.watchdog_us * 1000.0);
  m_words_per_packet = static_cast<uint32_t>(std::max(1, spec.packet_payload_bytes / 4));
  const auto& chans = m_routing.channels();
  m_channel.resize(chans.size());
  m_wire.resize(m_routing.wires());
  m_stats.links.resize(chans.size());
  for (size_t c = 0; c < chans.size(); ++c) {
    m_channel[c].rng = SplitMix64(mix_seed(seed, c));
    m_stats.links[c].from_chip = chans[c].from;
    m_stats.links[c].to_chip = chans[c].to;
    WireState& w = m_wire[chans[c].wire];
    w.channels[w.channels[0] < 0 ? 0 : 1] = static_cast<int>(c);
  }
  m_stats.chips.resize(spec.chips);
  m_domain_seq.assign(spec.chips, 0);
  m_xb.resize(spec.chips);
  for (auto& xb : m_xb) {
    xb.active.resize(spec.cores_per_chip);
    xb.rr.assign(spec.cores_per_chip, 0);
  }
  set_ranks(nullptr);
}

int Engine::inject_limit() const {
  return m_spec.queue_packets - m_spec.queue_packets / 4;
}

void Engine::post(Picos ready, Transfer t) {
  const auto bad = [&](const Endpoint& e) {
    return e.chip < 0 || e.chip >= m_spec.chips || e.core < 0 || e.core >= m_spec.cores_per_chip;
  };
  const std::string who =
      fmt::format("fabric: transfer {} from chip {} core {}", t.id, t.src.chip, t.src.core);
  if (bad(t.src) || bad(t.dst)) {
    const Endpoint& e = bad(t.src) ? t.src : t.dst;
    throw Error(
        who, fmt::format("{} chip {} core {} does not exist (the system has {} chips x {} cores)",
                         bad(t.src) ? "source" : "destination", e.chip, e.core, m_spec.chips,
                         m_spec.cores_per_chip));
  }
  if (ready < 0) throw Error(who, fmt::format("ready time {} ps is negative", ready));
  TransferState s;
  s.ready = ready;
  const uint64_t words = t.size_words();
  const uint64_t packets =
      std::max<uint64_t>(1, (words + m_words_per_packet - 1) / m_words_per_packet);
  if (packets > UINT32_MAX)
    throw Error(who, fmt::format("{} words is too large a transfer", words));
  s.packets = static_cast<uint32_t>(packets);
  s.t = std::move(t);
  m_transfers.push_back(std::move(s));
}

void Engine::schedule(Part& P, Picos t, Ev kind, uint32_t a) {
  const Event e{t, static_cast<uint32_t>(P.origin), kind, m_domain_seq[P.origin]++, a};
  if (m_windowed) {
    const int chip = domain(P, e);
    const bool here = owns(chip);
    const size_t to = here ? m_part_of[static_cast<size_t>(chip)] : 0;
    if (!here || &m_parts[to] != &P) {  // another partition's chip: handed over after this window
      Handoff h{e, {}, static_cast<uint32_t>(chip)};
      if (kind == Ev::kArrive || kind == Ev::kTimeout) {
        h.pk = P.packets[a];
        P.free_packets.push_back(a);
      }
      (here ? P.out[to] : P.remote[static_cast<size_t>(m_chip_rank[static_cast<size_t>(chip)])])
          .push_back(h);
      return;
    }
  }
  push(P, e);
}

void Engine::push(Part& P, const Event& e) {
  P.heap.push_back(e);
  std::push_heap(P.heap.begin(), P.heap.end(), later);
}

void Engine::run_part(Part& P, Picos horizon) {
  while (!P.heap.empty() && P.heap.front().time < horizon) {
    std::pop_heap(P.heap.begin(), P.heap.end(), later);
    const Event e = P.heap.back();
    P.heap.pop_back();
    if (!m_windowed && P.pending > 0 && e.time - P.last_progress > m_watchdog_ps)
      stuck(P.now, fmt::format("no packet moved for {} us of simulated time", m_spec.watchdog_us));
    P.now = e.time;
    P.origin = domain(P, e);
    ++P.events;
    const size_t before = P.pending;
    run_event(P, e);
    if (P.pending < before) P.last_arrival = P.now;
  }
}

std::vector<Arrival> Engine::drain() {
  if (m_transfers.empty()) return {};
  Picos start = m_transfers.front().ready;
  for (const auto& s : m_transfers) start = std::min(start, s.ready);
  m_now = std::min(m_now, start);  // the fabric is empty between drains
  plan_partitions();
  for (Part& P : m_parts) {
    P.now = m_now;
    P.last_progress = start;
    P.last_arrival = 0;
    P.pending = 0;
    P.events = P.packets_sent = 0;
    P.out.assign(m_parts.size(), {});
    P.in.assign(m_parts.size(), {});
    P.from_ranks.clear();
    P.remote.assign(static_cast<size_t>(m_rank_count), {});
  }
  std::fill(m_domain_seq.begin(), m_domain_seq.end(), 0);
  for (uint32_t i = 0; i < m_transfers.size(); ++i) {
    TransferState& s = m_transfers[i];
    auto& cs = m_stats.chips[s.t.src.chip];
    ++cs.transfers_sent;
    cs.bytes_sent += 4 * s.t.size_words();
    if (owns(s.t.dst.chip)) {
      ++m_parts[m_part_of[static_cast<size_t>(s.t.dst.chip)]].pending;
      s.got.assign((s.packets + 63) / 64, 0);
    }
    if (!owns(s.t.src.chip)) continue;
    Part& P = m_parts[m_part_of[static_cast<size_t>(s.t.src.chip)]];
    P.origin = domain(s.t.src.chip);
    if (s.t.src.chip == s.t.dst.chip) {
      const Picos dt =
          ns_to_ps(m_spec.onchip_latency_ns) +
          transfer_ps(static_cast<int64_t>(4 * s.t.size_words()), m_spec.onchip_gbytes_per_s);
      schedule(P, s.ready + dt, Ev::kOnchipDone, i);
    } else {
      schedule(P, s.ready, Ev::kReady, i);
    }
  }
  Progress all;
  if (m_windowed) {
    all = run_partitions();
  } else {
    run_part(m_parts.front(), std::numeric_limits<Picos>::max());
    all = local_progress();
  }
  if (all.pending > 0) stuck_everywhere(all.now, "no event is left that could move a packet");
  for (const Part& P : m_parts) {
    (m_split ? m_rank_events : m_stats.events) += P.events;
    (m_split ? m_rank_packets : m_stats.packets) += P.packets_sent;
  }
  if (m_split) share_arrival_times();

  std::vector<Arrival> out;
  out.reserve(m_transfers.size());
  for (auto& s : m_transfers) out.push_back({std::move(s.t), s.done_time});
  m_transfers.clear();
  std::sort(out.begin(), out.end(), [](const Arrival& x, const Arrival& y) {
    const auto key = [](const Arrival& a) {
      return std::make_tuple(a.time, a.transfer.dst.chip, a.transfer.dst.core, a.transfer.src.chip,
                             a.transfer.src.core, a.transfer.id);
    };
    return key(x) < key(y);
  });
  m_stats.transfers += out.size();
  Part closing;  // every integral closes at the last event of any partition
  closing.now = all.now;
  m_stats.end_ps = std::max(m_stats.end_ps, all.now);  // the last event (an ack) of any drain
  const double span = static_cast<double>(m_stats.end_ps);
  const auto& chans = m_routing.channels();
  for (size_t c = 0; c < m_channel.size(); ++c) {
    if (!owns(chans[c].from)) continue;  // its rank closes it
    set_occupancy(closing, static_cast<uint32_t>(c), 0);
    LinkStats& l = m_stats.links[c];
    l.mean_queue = span > 0 ? m_channel[c].occ_integral / span : 0;
    l.utilisation = span > 0 ? static_cast<double>(l.busy_ps) / span : 0;
  }
  m_now = all.last_arrival;
  return out;
}

int Engine::domain(const Part& P, const Event& e) const {
  if (m_spec.duplex != Duplex::kFull) return 0;
  const auto& chans = m_routing.channels();
  switch (e.kind) {
    case Ev::kReady:
    case Ev::kOnchipDone:
      return m_transfers[e.a].t.src.chip;
    case Ev::kWireFree:  // full duplex: a wire carries one channel
      return chans[static_cast<size_t>(m_wire[e.a].channels[0])].from;
    case Ev::kArrive:
      return chans[P.packets[e.a].channel].to;
    case Ev::kAck:
      return chans[e.a].from;
    case Ev::kTimeout:
      return chans[P.packets[e.a].channel].from;
  }
  return 0;
}

void Engine::run_event(Part& P, const Event& e) {
  switch (e.kind) {
    case Ev::kReady:
      on_ready(P, e.a);
      break;
    case Ev::kOnchipDone: {
      TransferState& s = m_transfers[e.a];
      s.done_time = P.now;
      --P.pending;
      P.last_progress = P.now;
      auto& cs = m_stats.chips[s.t.dst.chip];
      ++cs.transfers_received;
      cs.bytes_received += 4 * s.t.size_words();
      break;
    }
    case Ev::kWireFree:
      m_wire[e.a].busy = false;
      start_wire(P, static_cast<int>(e.a));
      break;
    case Ev::kArrive:
      on_arrive(P, e.a);
      break;
    case Ev::kAck:
      on_ack(P, e.a);
      break;
    case Ev::kTimeout:
      on_timeout(P, e.a);
      break;
  }
}

// XREQ: the source core announces the transfer; the XB grants XON if no core streams.
void Engine::on_ready(Part& P, uint32_t tr) {
  const Endpoint src = m_transfers[tr].t.src;
  ExchangeBlock& xb = m_xb[src.chip];
  xb.active[src.core].push_back(tr);
  if (xb.granted < 0)
    grant_next(P, src.chip);
  else if (xb.granted == src.core && !xb.xoff)
    pump(P, src.chip);
}

// XOFF to the current core (it has nothing left) and XON to the next core with work, round robin.
void Engine::grant_next(Part& P, int chip) {
  ExchangeBlock& xb = m_xb[chip];
  const int cores = m_spec.cores_per_chip;
  const int from = xb.granted < 0 ? 0 : xb.granted + 1;
  xb.granted = -1;
  for (int i = 0; i < cores; ++i) {
    const int core = (from + i) % cores;
    if (!xb.active[core].empty()) {
      xb.granted = core;
      pump(P, chip);
      return;
    }
  }
}

// The granted core streams packets, one per announced transfer in turn, until a queue is full.
void Engine::pump(Part& P, int chip) {
  ExchangeBlock& xb = m_xb[chip];
  while (xb.granted >= 0) {
    auto& list = xb.active[xb.granted];
    uint32_t& rr = xb.rr[xb.granted];
    if (list.empty()) {
      rr = 0;
      grant_next(P, chip);
      return;
    }
    if (rr >= list.size()) rr = 0;
    const uint32_t tr = list[rr];
    TransferState& s = m_transfers[tr];
    const uint32_t ch = static_cast<uint32_t>(m_routing.next_channel(chip, s.t.dst.chip));
    ChannelState& cs = m_channel[ch];
    if (cs.occupancy >= inject_limit()) {
      if (!xb.xoff) {
        xb.xoff = true;
        xb.xoff_since = P.now;
        ++m_stats.chips[chip].xoff_count;
      }
      cs.xb_waiting = true;
      return;
    }
    if (xb.xoff) {
      xb.xoff = false;
      m_stats.chips[chip].xoff_ps += P.now - xb.xoff_since;
    }
    const uint32_t p = new_packet(P);
    Packet& pk = P.packets[p];
    pk.transfer = tr;
    pk.seq = s.injected++;
    const uint64_t first = static_cast<uint64_t>(pk.seq) * m_words_per_packet;
    pk.bytes = static_cast<uint32_t>(
        4 * std::min<uint64_t>(m_words_per_packet,
                               s.t.size_words() - std::min(first, s.t.size_words())));
    ++m_stats.chips[chip].packets_injected;
    P.last_progress = P.now;
    set_occupancy(P, ch, +1);
    enqueue(P, ch, p, false);
    if (s.injected == s.packets)
      list.erase(list.begin() + rr);
    else
      ++rr;
  }
}

uint32_t Engine::new_packet(Part& P) {
  if (!P.free_packets.empty()) {
    const uint32_t p = P.free_packets.back();
    P.free_packets.pop_back();
    P.packets[p] = Packet{};
    return p;
  }
  P.packets.emplace_back();
  return static_cast<uint32_t>(P.packets.size() - 1);
}

void Engine::enqueue(Part& P, uint32_t ch, uint32_t p, bool front) {
  ChannelState& cs = m_channel[ch];
  TESSERA_CHECK(cs.count < cs.ring.size(), "fabric: a channel queue overflowed");
  const uint32_t cap = static_cast<uint32_t>(cs.ring.size());
  if (front) {
    cs.head = (cs.head + cap - 1) % cap;
    cs.ring[cs.head] = p;
  } else {
    cs.ring[(cs.head + cs.count) % cap] = p;
  }
  ++cs.count;
  P.packets[p].channel = ch;
  kick(P, ch);
}

void Engine::kick(Part& P, uint32_t ch) {
  const int wire = m_routing.channels()[ch].wire;
  if (!m_wire[wire].busy) start_wire(P, wire);
}

void Engine::set_occupancy(Part& P, uint32_t ch, int delta) {
  ChannelState& cs = m_channel[ch];
  if (P.now > cs.occ_since)
    cs.occ_integral +=
        static_cast<double>(cs.occupancy) * static_cast<double>(P.now - cs.occ_since);
  cs.occ_since = P.now;
  cs.occupancy += delta;
  LinkStats& l = m_stats.links[ch];
  l.max_queue = std::max(l.max_queue, cs.occupancy);
}

// The wire is idle: send the head packet of one of its channels (half duplex: alternate).
void Engine::start_wire(Part& P, int wire) {
  WireState& w = m_wire[wire];
  int ch = -1;
  for (int i = 1; i <= 2 && ch < 0; ++i) {
    const int k = (w.last + i) % 2;
    if (w.channels[k] >= 0 && m_channel[w.channels[k]].count > 0) {
      ch = w.channels[k];
      w.last = k;
    }
  }
  if (ch < 0) return;
  if (P.now < w.free_at) {  // still sending what an earlier drain put on it
    w.busy = true;
    schedule(P, w.free_at, Ev::kWireFree, static_cast<uint32_t>(wire));
    return;
  }
  ChannelState& cs = m_channel[ch];
  const uint32_t p = cs.ring[cs.head];
  cs.head = (cs.head + 1) % static_cast<uint32_t>(cs.ring.size());
  --cs.count;
  Packet& pk = P.packets[p];
  const int64_t wire_bytes = pk.bytes + m_spec.packet_header_bytes;
  const Picos ser = transfer_ps(wire_bytes, m_spec.link_gbytes_per_s);
  LinkStats& l = m_stats.links[ch];
  l.wire_bytes += static_cast<uint64_t>(wire_bytes);
  ++l.packets;
  ++P.packets_sent;
  l.busy_ps += ser;
  if (pk.sent_on_hop) ++l.retransmissions;
  pk.sent_on_hop = true;
  pk.sent_end = P.now + ser;
  w.busy = true;
  w.free_at = P.now + ser;
  schedule(P, P.now + ser, Ev::kWireFree, static_cast<uint32_t>(wire));
  const bool lost = m_spec.loss_rate > 0 && cs.rng.unit53() < m_spec.loss_rate;
  if (lost) {
    ++l.dropped;
    schedule(P, pk.sent_end + m_timeout_ps, Ev::kTimeout, p);
  } else {
    schedule(P, pk.sent_end + m_latency_ps, Ev::kArrive, p);
  }
}

void Engine::on_arrive(Part& P, uint32_t p) {
  Packet& pk = P.packets[p];
  const uint32_t ch = pk.channel;
  const int here = m_routing.channels()[ch].to;
  TransferState& s = m_transfers[pk.transfer];
  if (here == s.t.dst.chip) {
    m_stats.links[ch].payload_bytes += pk.bytes;
    schedule(P, P.now + m_latency_ps, Ev::kAck, ch);
    deliver(P, p);
    return;
  }
  const uint32_t next = static_cast<uint32_t>(m_routing.next_channel(here, s.t.dst.chip));
  if (m_channel[next].occupancy >= m_spec.queue_packets) {  // full: refuse, the sender times out
    ++m_stats.links[ch].refused;
    schedule(P, pk.sent_end + m_timeout_ps, Ev::kTimeout, p);
    return;
  }
  m_stats.links[ch].payload_bytes += pk.bytes;
  ++m_stats.chips[here].packets_forwarded;
  P.last_progress = P.now;
  schedule(P, P.now + m_latency_ps, Ev::kAck, ch);
  pk.sent_on_hop = false;
  set_occupancy(P, next, +1);
  enqueue(P, next, p, false);
}

void Engine::deliver(Part& P, uint32_t p) {
  const Packet pk = P.packets[p];
  P.free_packets.push_back(p);
  TransferState& s = m_transfers[pk.transfer];
  auto& cs = m_stats.chips[s.t.dst.chip];
  uint64_t& word = s.got[pk.seq / 64];
  const uint64_t bit = 1ull << (pk.seq % 64);
  if (word & bit) {
    ++cs.duplicates;
    return;
  }
  word |= bit;
  ++cs.packets_delivered;
  P.last_progress = P.now;
  if (++s.delivered == s.packets) {
    s.done_time = P.now;
    --P.pending;
    ++cs.transfers_received;
    cs.bytes_received += 4 * s.t.size_words();
  }
}

void Engine::on_ack(Part& P, uint32_t ch) {
  set_occupancy(P, ch, -1);
  ChannelState& cs = m_channel[ch];
  if (cs.xb_waiting && cs.occupancy < inject_limit()) {
    cs.xb_waiting = false;
    pump(P, m_routing.channels()[ch].from);  // XON
  }
}

// A dropped or refused packet: send it again, ahead of new packets, on the same channel.
void Engine::on_timeout(Part& P, uint32_t p) {
  enqueue(P, P.packets[p].channel, p, true);
}

void Engine::stuck(Picos now, const std::string& why) const {
  std::string parties;
  int listed = 0;
  size_t waiting = 0;
  for (const auto& s : m_transfers) {
    if (s.done_time >= 0) continue;
    ++waiting;
    if (listed++ < 8)
      parties += fmt::format(
          "; transfer {} chip {} core {} -> chip {} core {} waits ({}/{} packets delivered)",
          s.t.id, s.t.src.chip, s.t.src.core, s.t.dst.chip, s.t.dst.core, s.delivered, s.packets);
  }
  if (waiting > 8) parties += fmt::format("; and {} more transfers", waiting - 8);
  listed = 0;
  for (size_t c = 0; c < m_channel.size(); ++c) {
    if (m_channel[c].occupancy == 0 && !m_channel[c].xb_waiting) continue;
    if (listed++ < 8)
      parties += fmt::format("; link {}->{} holds {} packets ({} retransmissions)",
                             m_stats.links[c].from_chip, m_stats.links[c].to_chip,
                             m_channel[c].occupancy, m_stats.links[c].retransmissions);
  }
  throw Error(fmt::format("fabric at {} ps", now), why + parties);
}

}  // namespace tessera::fabric
