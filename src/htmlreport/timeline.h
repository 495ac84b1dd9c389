// The unit-activity timeline, read from a Chrome trace-event file (`tessera run --trace`,
// report/trace.h). The file is read with a streaming (SAX) parser, so a trace of millions of
// events never becomes a JSON tree. Chart:
//   {"type": "timeline", "title", "unit": "us", "end", "events", "dropped", "names": [..],
//    "tracks": [{"name", "start": [..], "dur": [..], "kind": [index into names]}]}
// with every span ("X" event) of every track sorted by start time. The page draws the whole run
// as busy-share bins and individual spans once a zoom shows few enough of them, so every span
// stays reachable.
#pragma once

#include <string>

#include "htmlreport/chart.h"

namespace tessera::htmlreport {

// The timeline chart of the trace in `text` (the contents of `path`; errors name it).
Json parse_timeline(const std::string& path, std::string_view text);

// The "timeline" section of the trace at `path`.
Json timeline_section(const std::string& path);

}  // namespace tessera::htmlreport
