#include "htmlreport/input.h"

#include <array>
#include <utility>

#include <fmt/format.h>

#include "common/error.h"
#include "common/file_io.h"
#include "report/format.h"

namespace tessera::htmlreport {
namespace {

constexpr std::array<std::pair<std::string_view, Kind>, 6> kKinds{{
    {"tessera-train", Kind::kTrain},
    {"tessera-stats", Kind::kStats},
    {"tessera-allreduce", Kind::kAllreduce},
    {"tessera-map", Kind::kMap},
    {"tessera-map-bench", Kind::kMapBench},
    {"tessera-suite", Kind::kSuite},
}};

// Keys by which an untagged JSON is recognised as a report of a tessera from before the tag.
bool looks_like_old_report(const nlohmann::ordered_json& j) {
  for (const char* k : {"config_hash", "epochs", "stalls", "bundles_per_cycle", "placement",
                        "results", "bound_seconds"})
    if (j.contains(k)) return true;
  return false;
}

std::string file_label(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

Input parse_input(const std::string& path, std::string_view text) {
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // a syntax error or a number out of range
    throw Error(path, fmt::format("not JSON: {}", e.what()));
  }
  const char* expected =
      "not a tessera report (a JSON object with a \"format\" key \"tessera-<kind>\" is expected)";
  if (!j.is_object()) throw Error(path, expected);
  if (!j.contains("format")) {
    if (looks_like_old_report(j))
      throw Error(path,
                  "written by an older tessera (no format tag); re-run the command that made it");
    throw Error(path, expected);
  }
  if (!j["format"].is_string() || !j["format"].get<std::string>().starts_with("tessera-"))
    throw Error(path, expected);
  const std::string format = j["format"].get<std::string>();
  if (!j.contains("version") || !j["version"].is_number_integer())
    throw Error(path, fmt::format("{} without an integer \"version\"", format));
  const auto version = j["version"].get<int64_t>();
  if (version != report::kReportVersion)
    throw Error(path, fmt::format("format version {} of {}; this tessera reads version {}", version,
                                  format, report::kReportVersion));
  for (const auto& [name, kind] : kKinds)
    if (name == format) return Input{path, file_label(path), kind, std::move(j)};
  throw Error(path, fmt::format("unknown report kind '{}'", format));
}

Input read_input(const std::string& path) {
  return parse_input(path, read_file(path, "report"));
}

std::vector<Input> read_inputs(const std::vector<std::string>& paths) {
  std::vector<Input> out;
  out.reserve(paths.size());
  for (const std::string& p : paths) out.push_back(read_input(p));
  return out;
}

}  // namespace tessera::htmlreport
