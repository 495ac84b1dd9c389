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

#include <string>

#include "htmlreport/chart.h"

namespace tessera::htmlreport {

// The timeline chart of the trace in `text` (the contents of `path`; errors name it).
Json parse_timeline(const std::string& path, std::string_view text);

// The "timeline" section of the trace at `path`.
Json timeline_section(const std::string& path);

}  // namespace tessera::htmlreport
