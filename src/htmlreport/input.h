// The inputs of an HTML report: tessera's JSON reports, each classified by its format tag
// (report/format.h). A JSON that is not a tessera report, a tessera report of another format
// version, or a kind the report cannot show is refused with an error naming the file and why.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::htmlreport {

enum class Kind {
  kTrain,      // tessera train --report
  kStats,      // tessera run --stats
  kAllreduce,  // tessera bench allreduce --json
  kMap,        // tessera map --out
  kMapBench,   // tessera map bench --out
  kSuite,      // tessera bench suite --json
};

struct Input {
  std::string path;   // as given (errors and the page name runs by it)
  std::string label;  // the file name without directories: the run's name in the page
  Kind kind;
  nlohmann::ordered_json data;
};

// Parses `text` (the contents of `path`) and classifies it. Errors name `path`:
//   "not JSON: <parser message>", "not a tessera report (a JSON object with a \"format\" key
//   \"tessera-<kind>\" is expected)", "written by an older tessera (no format tag); re-run the
//   command that made it", "format version N of tessera-<kind>; this tessera reads version M",
//   "unknown report kind 'tessera-x'".
Input parse_input(const std::string& path, std::string_view text);

// read_file + parse_input.
Input read_input(const std::string& path);

std::vector<Input> read_inputs(const std::vector<std::string>& paths);

}  // namespace tessera::htmlreport
