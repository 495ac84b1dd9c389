#include "htmlreport/timeline.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>

#include "common/error.h"
#include "common/file_io.h"
#include "htmlreport/chart.h"

namespace tessera::htmlreport {
namespace {

struct Track {
  std::string name;
  std::vector<double> start, dur;           // microseconds (ts, dur)
  std::vector<double> start_cycle, cycles;  // simulated cycles (args.cycle, args.cycles)
  std::vector<int> name_index;
};

// Collects "M" thread_name and "X" events of the top-level "traceEvents" array. Depths: the root
// object 1, traceEvents 2, an event 3, its args 4.
class TraceSax : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::map<int64_t, Track> tracks;
  std::vector<std::string> names;
  std::string error;    // the JSON does not parse
  std::string invalid;  // it parses, but a field is out of its range
  bool saw_events = false;
  bool in_cycles = true;  // every span has args {cycle, cycles} (tessera's traces do)
  int64_t events = 0, dropped = 0;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t v) override { return number(static_cast<double>(v)); }
  bool number_unsigned(number_unsigned_t v) override { return number(static_cast<double>(v)); }
  bool number_float(number_float_t v, const string_t&) override { return number(v); }
  bool string(string_t& s) override {
    if (m_in_events && m_depth == 3 && m_event_key == "ph") m_ph = s;
    if (m_in_events && m_depth == 3 && m_event_key == "name") m_name = s;
    if (m_in_events && m_depth == 4 && m_event_key == "args" && m_arg_key == "name") m_arg = s;
    return true;
  }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    if (++m_depth == 3 && m_in_events) {
      m_ph.clear(), m_name.clear(), m_arg.clear(), m_event_key.clear();
      m_tid = 0, m_ts = 0, m_dur = 0, m_cycle = 0, m_cycles = 0;
      m_has_cycle = m_has_cycles = false;
    }
    return true;
  }
  bool key(string_t& k) override {
    if (m_depth == 1) m_top_key = k;
    if (m_depth == 2) m_other_key = k;
    if (m_depth == 3) m_event_key = k;
    if (m_depth == 4) m_arg_key = k;
    return true;
  }
  bool end_object() override {
    if (m_depth-- == 3 && m_in_events) commit();
    return true;
  }
  bool start_array(std::size_t) override {
    if (++m_depth == 2 && m_top_key == "traceEvents") m_in_events = saw_events = true;
    return true;
  }
  bool end_array() override {
    if (m_depth-- == 2) m_in_events = false;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    error = e.what();
    return false;
  }

 private:
  bool number(double v) {
    if (m_in_events && m_depth == 3) {
      if (m_event_key == "tid" && !integer(v, "an event's \"tid\"", m_tid)) return false;
      if (m_event_key == "ts") m_ts = v;
      if (m_event_key == "dur") m_dur = v;
    }
    if (m_in_events && m_depth == 4 && m_event_key == "args") {
      if (m_arg_key == "cycle") m_cycle = v, m_has_cycle = true;
      if (m_arg_key == "cycles") m_cycles = v, m_has_cycles = true;
    }
    if (m_depth == 2 && m_top_key == "otherData" && m_other_key == "dropped_events")
      return integer(v, "\"otherData\".\"dropped_events\"", dropped);
    return true;
  }
  // `out` = v if v is an integer within +-2^53 (exact in a double); else records why and stops.
  bool integer(double v, const char* what, int64_t& out) {
    constexpr double kLimit = 9007199254740992.0;  // 2^53
    if (!integral_within(v, -kLimit, kLimit)) {
      invalid = fmt::format("{} is {}, not an integer within +-2^53", what, v);
      return false;
    }
    out = static_cast<int64_t>(v);
    return true;
  }
  void commit() {
    if (m_ph == "M" && m_name == "thread_name") tracks[m_tid].name = m_arg;
    if (m_ph != "X") return;
    ++events;
    auto [it, added] = m_name_ids.try_emplace(m_name, static_cast<int>(names.size()));
    if (added) names.push_back(m_name);
    Track& t = tracks[m_tid];
    t.start.push_back(m_ts);
    t.dur.push_back(m_dur);
    t.start_cycle.push_back(m_cycle);
    t.cycles.push_back(m_cycles);
    in_cycles = in_cycles && m_has_cycle && m_has_cycles;
    t.name_index.push_back(it->second);
  }

  int m_depth = 0;
  bool m_in_events = false;
  std::string m_top_key, m_other_key, m_event_key, m_arg_key, m_ph, m_name, m_arg;
  int64_t m_tid = 0;
  double m_ts = 0, m_dur = 0, m_cycle = 0, m_cycles = 0;
  bool m_has_cycle = false, m_has_cycles = false;
  std::unordered_map<std::string, int> m_name_ids;
};

}  // namespace

Json timeline_chart(const std::string& title, const std::string& unit,
                    const std::vector<std::string>& names, const std::vector<SpanTrack>& tracks,
                    int64_t dropped) {
  Json out = Json::array();
  double end = 0;
  int64_t events = 0;
  for (const SpanTrack& t : tracks) {
    if (t.start.empty()) continue;
    // Spans in start order, starts as differences from the previous start (short numbers in the
    // page; the script adds them up).
    std::vector<size_t> order(t.start.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return t.start[a] < t.start[b]; });
    Json delta = Json::array(), length = Json::array(), kind = Json::array();
    double previous = 0;
    for (size_t i : order) {
      delta.push_back(t.start[i] - previous);
      previous = t.start[i];
      length.push_back(t.dur[i]);
      kind.push_back(t.kind[i]);
      end = std::max(end, t.start[i] + t.dur[i]);
    }
    events += static_cast<int64_t>(t.start.size());
    out.push_back({{"name", t.name}, {"start_delta", delta}, {"dur", length}, {"kind", kind}});
  }
  return Json{{"type", "timeline"}, {"title", title},          {"unit", unit},
              {"end", end},         {"events", events},        {"dropped", dropped},
              {"names", names},     {"tracks", std::move(out)}};
}

void TimelineBuilder::add(const std::string& track, double start, double dur,
                          const std::string& name) {
  auto [it, added] = m_name_index.try_emplace(name, static_cast<int>(m_names.size()));
  if (added) m_names.push_back(name);
  auto t = std::find_if(m_tracks.begin(), m_tracks.end(),
                        [&](const SpanTrack& s) { return s.name == track; });
  if (t == m_tracks.end()) t = m_tracks.insert(t, SpanTrack{track, {}, {}, {}});
  t->start.push_back(start);
  t->dur.push_back(dur);
  t->kind.push_back(it->second);
}

Json TimelineBuilder::to_json(const std::string& title, const std::string& unit) const {
  return timeline_chart(title, unit, m_names, m_tracks);
}

Json parse_timeline(const std::string& path, std::string_view text) {
  TraceSax sax;
  const bool parsed = nlohmann::json::sax_parse(text, &sax);
  if (!sax.invalid.empty()) throw Error(path, "bad trace: " + sax.invalid);
  if (!parsed || !sax.error.empty())
    throw Error(path, fmt::format("not a trace (JSON error: {})", sax.error));
  if (!sax.saw_events)
    throw Error(path, "not a Chrome trace-event file (no \"traceEvents\" array)");
  const bool cycles = sax.in_cycles && sax.events > 0;
  std::vector<SpanTrack> tracks;
  for (const auto& [tid, t] : sax.tracks)
    tracks.push_back(
        {t.name, cycles ? t.start_cycle : t.start, cycles ? t.cycles : t.dur, t.name_index});
  return timeline_chart("Unit activity (scroll to zoom, drag to pan)", cycles ? "cycles" : "us",
                        sax.names, tracks, sax.dropped);
}

Json timeline_section(const std::string& path) {
  return make_section("timeline", "Timeline",
                      Json::array({parse_timeline(path, read_file(path, "trace"))}));
}

}  // namespace tessera::htmlreport
