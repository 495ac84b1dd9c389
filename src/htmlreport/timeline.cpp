#include "htmlreport/timeline.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>

#include "common/error.h"
#include "common/file_io.h"

namespace tessera::htmlreport {
namespace {

struct Track {
  std::string name;
  std::vector<double> start, dur;
  std::vector<int> name_index;
};

// Collects "M" thread_name and "X" events of the top-level "traceEvents" array. Depths: the root
// object 1, traceEvents 2, an event 3, its args 4.
class TraceSax : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::map<int64_t, Track> tracks;
  std::vector<std::string> names;
  std::string error;
  bool saw_events = false;
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
      m_tid = 0, m_ts = 0, m_dur = 0;
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
      if (m_event_key == "tid") m_tid = static_cast<int64_t>(v);
      if (m_event_key == "ts") m_ts = v;
      if (m_event_key == "dur") m_dur = v;
    }
    if (m_depth == 2 && m_top_key == "otherData" && m_other_key == "dropped_events")
      dropped = static_cast<int64_t>(v);
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
    t.name_index.push_back(it->second);
  }

  int m_depth = 0;
  bool m_in_events = false;
  std::string m_top_key, m_other_key, m_event_key, m_arg_key, m_ph, m_name, m_arg;
  int64_t m_tid = 0;
  double m_ts = 0, m_dur = 0;
  std::unordered_map<std::string, int> m_name_ids;
};

// The track's spans in start order (the trace keeps recording order).
Json sorted_track(const Track& t) {
  std::vector<size_t> order(t.start.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return t.start[a] < t.start[b]; });
  Json start = Json::array(), dur = Json::array(), kind = Json::array();
  for (size_t i : order) {
    start.push_back(t.start[i]);
    dur.push_back(t.dur[i]);
    kind.push_back(t.name_index[i]);
  }
  return Json{{"name", t.name}, {"start", start}, {"dur", dur}, {"kind", kind}};
}

}  // namespace

Json parse_timeline(const std::string& path, std::string_view text) {
  TraceSax sax;
  if (!nlohmann::json::sax_parse(text, &sax) || !sax.error.empty())
    throw Error(path, fmt::format("not a trace (JSON error: {})", sax.error));
  if (!sax.saw_events)
    throw Error(path, "not a Chrome trace-event file (no \"traceEvents\" array)");
  Json tracks = Json::array();
  double end = 0;
  for (const auto& [tid, t] : sax.tracks) {
    for (size_t i = 0; i < t.start.size(); ++i) end = std::max(end, t.start[i] + t.dur[i]);
    if (!t.start.empty()) tracks.push_back(sorted_track(t));
  }
  return Json{{"type", "timeline"},   {"title", "Unit activity (scroll to zoom, drag to pan)"},
              {"unit", "us"},         {"end", end},
              {"events", sax.events}, {"dropped", sax.dropped},
              {"names", sax.names},   {"tracks", std::move(tracks)}};
}

Json timeline_section(const std::string& path) {
  return make_section("timeline", "Timeline",
                      Json::array({parse_timeline(path, read_file(path, "trace"))}));
}

}  // namespace tessera::htmlreport
