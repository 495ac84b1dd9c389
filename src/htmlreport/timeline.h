// The unit-activity timeline, read from a Chrome trace-event file (`tessera run --trace`,
// report/trace.h). The file is read with a streaming (SAX) parser, so a trace of millions of
// events never becomes a JSON tree. Chart:
//   {"type": "timeline", "title", "unit": "cycles" | "us", "end", "events", "dropped",
//    "names": [..], "tracks": [{"name", "start_delta": [..], "dur": [..], "kind": [index into
//    names]}]}
// with every span ("X" event) of every track sorted by start time, each start given as its
// difference from the previous one. Times are the spans' simulated cycles (args.cycle and
// args.cycles, which tessera writes) or, in a trace without them, microseconds (ts, dur). The page
// draws the whole run as busy-share bins and individual spans once a zoom shows few enough of them,
// so every span stays reachable.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "htmlreport/chart.h"

namespace tessera::htmlreport {

// A track of a timeline chart: per span its start, duration and the index of its name in the
// chart's names.
struct SpanTrack {
  std::string name;
  std::vector<double> start, dur;
  std::vector<int> kind;
};

// The "timeline" chart of `tracks` (spans in any order; a track without spans is left out):
// "end" is the latest span end, "events" the number of spans.
Json timeline_chart(const std::string& title, const std::string& unit,
                    const std::vector<std::string>& names, const std::vector<SpanTrack>& tracks,
                    int64_t dropped = 0);

// A timeline chart built span by span: tracks and span names keep their order of first use.
class TimelineBuilder {
 public:
  void add(const std::string& track, double start, double dur, const std::string& name);
  bool empty() const { return m_tracks.empty(); }
  Json to_json(const std::string& title, const std::string& unit) const;

 private:
  std::vector<std::string> m_names;
  std::map<std::string, int> m_name_index;
  std::vector<SpanTrack> m_tracks;
};

// The timeline chart of the trace in `text` (the contents of `path`; errors name it).
Json parse_timeline(const std::string& path, std::string_view text);

// The "timeline" section of the trace at `path`.
Json timeline_section(const std::string& path);

}  // namespace tessera::htmlreport
