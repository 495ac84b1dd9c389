// The report page: one self-contained HTML file. The chart library (d3, from Debian's libjs-d3)
// and the page's own script and style are embedded in it, and the data goes in as one JSON blob
// ({"title", "runs": [{"label", "path", "kind"}], "sections": [..]}, sections as in sections.h),
// so the page opens offline and makes no requests.
#pragma once

#include <string>
#include <vector>

#include "common/file_io.h"
#include "htmlreport/chart.h"
#include "htmlreport/input.h"

namespace tessera::htmlreport {

// Where the page's chart library is read from when a page is written.
inline constexpr const char* kChartLibrary = "/usr/share/javascript/d3/d3.min.js";

// The data blob of the inputs' sections, plus `timeline` (a section, or null).
Json page_data(const std::vector<Input>& in, Json timeline);

// The page around `data` with `library` (the chart library's source) embedded.
std::string render_page(const Json& data, const std::string& library);

// Reads the reports at `paths` (and the trace at `trace`, unless empty) and writes the page to
// `out`. Errors name the file: a bad report, a bad trace, the chart library missing ("install the
// Debian package libjs-d3"), an unwritable output.
void write_report(const std::vector<std::string>& paths, const std::string& trace,
                  const std::string& out);

// The page of a report a command has just made (`--html` on train, run, bench allreduce, map),
// written to `out` (opened before the run, so an unwritable path fails early).
void write_report(const Input& in, OutputFile& out);

}  // namespace tessera::htmlreport
