// Chrome trace-event JSON ("JSON Object Format"):
//   {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}
// with, in this order:
//   * "M" metadata: process_name for pid 1 (the core), then thread_name and thread_sort_index for
//     every track (tid = 1, 2, ... in order of first use, so Perfetto lists units in that order);
//   * the events in the order they were recorded: "X" complete events (ts, dur) for spans, with
//     args {detail, cycle, cycles}; "C" counter events named after their track, with args
//     {name: value} (Perfetto shows the track "<track> <name>").
// Times are microseconds of simulated time: cycles * 1e6 / clock_hz.
// The text is written by one streaming serializer (a trace of millions of events must not be built
// as a JSON DOM); to_json() parses that same text, so both views agree by construction.
#include "report/trace.h"

#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "common/error.h"

namespace tessera::report {

namespace {

constexpr int kPid = 1;

void append_escaped(std::string& out, std::string_view s) {
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c >= 0x80)  // control and non-ASCII bytes: \u00XX (read as Latin-1)
          out += fmt::format("\\u{:04x}", c);
        else
          out += ch;
    }
  }
  out += '"';
}

std::string number(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : "null";
}

}  // namespace

ChromeTrace::ChromeTrace(std::string process_name, double clock_hz, size_t max_events)
    : m_process(std::move(process_name)), m_clock_hz(clock_hz), m_max_events(max_events) {
  if (!(clock_hz > 0) || !std::isfinite(clock_hz))
    throw Error("trace", fmt::format("clock must be a positive frequency, got {} Hz", clock_hz));
}

int ChromeTrace::track_id(std::string_view track) {
  for (size_t i = 0; i < m_tracks.size(); ++i)
    if (m_tracks[i] == track) return static_cast<int>(i);
  m_tracks.emplace_back(track);
  return static_cast<int>(m_tracks.size() - 1);
}

void ChromeTrace::span(std::string_view track, std::string_view name, int64_t start,
                       int64_t duration, std::string_view detail) {
  if (m_events.size() >= m_max_events) {
    ++m_dropped;
    return;
  }
  m_events.push_back(
      {track_id(track), false, std::string(name), std::string(detail), start, duration, 0.0});
}

void ChromeTrace::counter(std::string_view track, std::string_view name, int64_t time,
                          double value) {
  if (m_events.size() >= m_max_events) {
    ++m_dropped;
    return;
  }
  m_events.push_back({track_id(track), true, std::string(name), {}, time, 0, value});
}

namespace {

// Joins events with commas, one per line, into a buffer handed to `sink` in pieces of about
// kChunk bytes (the rest at the last flush), so a long trace is never held whole.
class Writer {
 public:
  static constexpr size_t kChunk = size_t{1} << 20;
  explicit Writer(const std::function<void(std::string_view)>& sink) : m_sink(sink) {}
  void raw(std::string_view text) {
    m_buf += text;
    if (m_buf.size() >= kChunk) flush();
  }
  void event(const std::string& text) {
    raw(m_first ? "\n" : ",\n");
    raw(text);
    m_first = false;
  }
  void flush() {
    m_sink(m_buf);
    m_buf.clear();
  }

 private:
  const std::function<void(std::string_view)>& m_sink;
  std::string m_buf;
  bool m_first = true;
};

void write_trace(const std::function<void(std::string_view)>& sink, const std::string& process,
                 double clock_hz, const std::vector<std::string>& tracks, size_t dropped,
                 const auto& events) {
  const double us_per_cycle = 1e6 / clock_hz;
  Writer w(sink);
  w.raw("{\"traceEvents\": [");
  std::string s;
  s = fmt::format(R"({{"name": "process_name", "ph": "M", "pid": {}, "tid": 0, "args": {{"name": )",
                  kPid);
  append_escaped(s, process);
  w.event(s + "}}");
  for (size_t i = 0; i < tracks.size(); ++i) {
    s = fmt::format(
        R"({{"name": "thread_name", "ph": "M", "pid": {}, "tid": {}, "args": {{"name": )", kPid,
        i + 1);
    append_escaped(s, tracks[i]);
    w.event(s + "}}");
    w.event(fmt::format(
        R"({{"name": "thread_sort_index", "ph": "M", "pid": {}, "tid": {}, "args": {{"sort_index": {}}}}})",
        kPid, i + 1, i + 1));
  }
  for (const auto& e : events) {
    s = "{\"name\": ";
    if (e.is_counter) {
      append_escaped(s, tracks[static_cast<size_t>(e.track)]);
      s += fmt::format(R"(, "ph": "C", "pid": {}, "tid": {}, "ts": {}, "args": {{)", kPid,
                       e.track + 1, number(static_cast<double>(e.start) * us_per_cycle));
      append_escaped(s, e.name);
      s += ": " + number(e.value) + "}}";
    } else {
      append_escaped(s, e.name);
      s += fmt::format(
          R"(, "ph": "X", "pid": {}, "tid": {}, "ts": {}, "dur": {}, "args": {{"detail": )", kPid,
          e.track + 1, number(static_cast<double>(e.start) * us_per_cycle),
          number(static_cast<double>(e.duration) * us_per_cycle));
      append_escaped(s, e.detail);
      s += fmt::format(R"(, "cycle": {}, "cycles": {}}}}})", e.start, e.duration);
    }
    w.event(s);
  }
  w.raw(fmt::format(
      "\n], \"displayTimeUnit\": \"ns\", \"otherData\": {{\"clock_hz\": {}, \"events\": {}, "
      "\"dropped_events\": {}}}}}\n",
      number(clock_hz), events.size(), dropped));
  w.flush();
}

}  // namespace

nlohmann::json ChromeTrace::to_json() const {
  std::string text;
  write_trace([&text](std::string_view piece) { text += piece; }, m_process, m_clock_hz, m_tracks,
              m_dropped, m_events);
  return nlohmann::json::parse(text);
}

void ChromeTrace::write(OutputFile& out) const {
  write_trace([&out](std::string_view piece) { out.write(piece); }, m_process, m_clock_hz, m_tracks,
              m_dropped, m_events);
  out.close();
}

void ChromeTrace::write(const std::string& path) const {
  OutputFile out(path, "trace file");
  write(out);
}

}  // namespace tessera::report
