// Engine::save_state / restore_state (engine.h): the fabric between drains, for checkpoints.
#include <bit>

#include <fmt/format.h>

#include "common/error.h"
#include "fabric/engine.h"

namespace tessera::fabric {

namespace {

using Json = nlohmann::ordered_json;

uint64_t bits(double d) {
  return std::bit_cast<uint64_t>(d);
}

// Calls f(name, field) for every integer field of a LinkStats / ChipStats (one list for save and
// load).
template <class L, class F>
void each_link_field(L& l, F&& f) {
  f("from_chip", l.from_chip);
  f("to_chip", l.to_chip);
  f("wire_bytes", l.wire_bytes);
  f("payload_bytes", l.payload_bytes);
  f("packets", l.packets);
  f("retransmissions", l.retransmissions);
  f("dropped", l.dropped);
  f("refused", l.refused);
  f("busy_ps", l.busy_ps);
  f("max_queue", l.max_queue);
}

template <class C, class F>
void each_chip_field(C& c, F&& f) {
  f("transfers_sent", c.transfers_sent);
  f("transfers_received", c.transfers_received);
  f("bytes_sent", c.bytes_sent);
  f("bytes_received", c.bytes_received);
  f("packets_injected", c.packets_injected);
  f("packets_forwarded", c.packets_forwarded);
  f("packets_delivered", c.packets_delivered);
  f("duplicates", c.duplicates);
  f("xoff_count", c.xoff_count);
  f("xoff_ps", c.xoff_ps);
}

// Reads checked JSON; every error names `where` and what is wrong.
class StateReader {
 public:
  explicit StateReader(std::string where) : m_where(std::move(where)) {}
  const Json& at(const Json& j, const char* key) const {
    if (!j.is_object() || !j.contains(key)) fail(fmt::format("no '{}'", key));
    return j[key];
  }
  const Json& array(const Json& j, const char* key, size_t n) const {
    const Json& a = at(j, key);
    if (!a.is_array() || a.size() != n)
      fail(fmt::format("'{}' should have {} entries (this fabric's), it has {}", key, n,
                       a.is_array() ? a.size() : 0));
    return a;
  }
  template <class T>
  T get(const Json& j, const char* key) const {
    const Json& v = at(j, key);
    if (!v.is_number_integer()) fail(fmt::format("'{}' is not an integer", key));
    return v.get<T>();
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(m_where, "corrupt fabric state: " + why);
  }

 private:
  std::string m_where;
};

}  // namespace

bool Engine::idle() const {
  if (!m_transfers.empty()) return false;
  for (const Part& p : m_parts)
    if (!p.heap.empty() || p.pending != 0) return false;
  for (const ChannelState& c : m_channel)
    if (c.count != 0 || c.occupancy != 0 || c.xb_waiting) return false;
  for (const WireState& w : m_wire)
    if (w.busy) return false;
  for (const ExchangeBlock& xb : m_xb) {
    if (xb.granted >= 0 || xb.xoff) return false;
    for (const auto& a : xb.active)
      if (!a.empty()) return false;
  }
  return true;
}

Json Engine::save_state() const {
  if (!idle())
    throw Error("fabric", "cannot save its state while transfers are posted or in flight");
  Json j;
  j["now"] = m_now;
  Json channels = Json::array();
  for (const ChannelState& c : m_channel)
    channels.push_back({c.rng.state(), bits(c.occ_integral), c.occ_since});
  j["channels"] = channels;
  Json wires = Json::array();
  for (const WireState& w : m_wire) wires.push_back({w.free_at, w.last});
  j["wires"] = wires;
  Json links = Json::array();
  for (const LinkStats& l : m_stats.links) {
    Json o;
    each_link_field(l, [&](const char* k, auto v) { o[k] = v; });
    o["mean_queue_bits"] = bits(l.mean_queue);
    o["utilisation_bits"] = bits(l.utilisation);
    links.push_back(o);
  }
  Json chips = Json::array();
  for (const ChipStats& c : m_stats.chips) {
    Json o;
    each_chip_field(c, [&](const char* k, auto v) { o[k] = v; });
    chips.push_back(o);
  }
  j["links"] = links;
  j["chips"] = chips;
  j["end_ps"] = m_stats.end_ps;
  j["events"] = m_stats.events;
  j["packets"] = m_stats.packets;
  j["transfers"] = m_stats.transfers;
  return j;
}

void Engine::restore_state(const Json& j, const std::string& where) {
  if (!idle())
    throw Error("fabric", "cannot restore its state while transfers are posted or in flight");
  const StateReader r(where);
  m_now = r.get<Picos>(j, "now");
  const Json& channels = r.array(j, "channels", m_channel.size());
  for (size_t c = 0; c < m_channel.size(); ++c) {
    const Json& e = channels[c];
    if (!e.is_array() || e.size() != 3 || !e[0].is_number_unsigned() ||
        !e[1].is_number_unsigned() || !e[2].is_number_integer())
      r.fail(fmt::format("channel {} is not [rng state, occupancy integral bits, since]", c));
    m_channel[c].rng = SplitMix64(e[0].get<uint64_t>());
    m_channel[c].occ_integral = std::bit_cast<double>(e[1].get<uint64_t>());
    m_channel[c].occ_since = e[2].get<Picos>();
  }
  const Json& wires = r.array(j, "wires", m_wire.size());
  for (size_t w = 0; w < m_wire.size(); ++w) {
    const Json& e = wires[w];
    if (!e.is_array() || e.size() != 2 || !e[0].is_number_integer() || !e[1].is_number_integer() ||
        (e[1].get<int>() != 0 && e[1].get<int>() != 1))
      r.fail(fmt::format("wire {} is not [free at, last channel 0|1]", w));
    m_wire[w].free_at = e[0].get<Picos>();
    m_wire[w].last = e[1].get<int>();
  }
  const Json& links = r.array(j, "links", m_stats.links.size());
  for (size_t c = 0; c < m_stats.links.size(); ++c) {
    LinkStats& l = m_stats.links[c];
    const int from = l.from_chip, to = l.to_chip;
    each_link_field(l, [&](const char* k, auto& v) {
      v = r.get<std::remove_reference_t<decltype(v)>>(links[c], k);
    });
    if (l.from_chip != from || l.to_chip != to)
      r.fail(fmt::format("link {} is {}->{} here, {}->{} in the state", c, from, to, l.from_chip,
                         l.to_chip));
    l.mean_queue = std::bit_cast<double>(r.get<uint64_t>(links[c], "mean_queue_bits"));
    l.utilisation = std::bit_cast<double>(r.get<uint64_t>(links[c], "utilisation_bits"));
  }
  const Json& chips = r.array(j, "chips", m_stats.chips.size());
  for (size_t c = 0; c < m_stats.chips.size(); ++c)
    each_chip_field(m_stats.chips[c], [&](const char* k, auto& v) {
      v = r.get<std::remove_reference_t<decltype(v)>>(chips[c], k);
    });
  m_stats.end_ps = r.get<Picos>(j, "end_ps");
  m_stats.events = r.get<uint64_t>(j, "events");
  m_stats.packets = r.get<uint64_t>(j, "packets");
  m_stats.transfers = r.get<uint64_t>(j, "transfers");
}

}  // namespace tessera::fabric
