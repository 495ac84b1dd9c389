#include "cli/common_flags.h"

#include <regex>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "graph/model_json.h"

namespace tessera::cli {

CLI::Option* add_config_flag(CLI::App& cmd, std::string& path) {
  return cmd.add_option("--config", path, "machine config file (default: the built-in defaults)");
}

CLI::Option* add_set_flag(CLI::App& cmd, std::vector<std::string>& sets) {
  return cmd.add_option("--set", sets,
                        "override a config key: KEY=VALUE (e.g. core.mxu.term.acc_width=12); "
                        "repeatable");
}

nlohmann::json config_overrides(const std::vector<std::string>& sets) {
  nlohmann::json o = nlohmann::json::object();
  for (const std::string& kv : sets) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--set", "wants KEY=VALUE, got '" + kv + "'");
    const std::string value = kv.substr(eq + 1);
    const nlohmann::json parsed = nlohmann::json::parse(value, nullptr, false);
    // A value that is not JSON is taken as a string, except a JSON number that failed to parse,
    // which can only have overflowed a double.
    static const std::regex kJsonNumber(R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)");
    if (parsed.is_discarded() && std::regex_match(value, kJsonNumber))
      throw UsageError("--set", kv.substr(0, eq) + ": the number " + value + " is out of range");
    o[kv.substr(0, eq)] = parsed.is_discarded() ? nlohmann::json(value) : parsed;
  }
  return o;
}

graph::ModelSpec model_from_flag(const std::string& name_or_path) {
  if (name_or_path.ends_with(".json")) return graph::read_model_json(name_or_path);
  return parse_flag_value("--model", [&] { return graph::zoo_spec(name_or_path); });
}

CLI::Option* add_json_flag(CLI::App& cmd, bool& json) {
  return cmd.add_flag("--json", json, "print JSON instead of text");
}

CLI::Option* add_seed_flag(CLI::App& cmd, uint64_t& seed, const std::string& what) {
  return check_non_negative_integer(
      cmd.add_option("--seed", seed, "seed of the " + what)->capture_default_str());
}

int default_threads() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

CLI::Option* add_threads_flag(CLI::App& cmd, int& threads) {
  CLI::Option* o = check_positive_integer(cmd.add_option(
      "--threads", threads,
      "host threads simulating the processors (default: the host's cores); results do not "
      "depend on it"));
  // After the positive-integer check: `text` is digits with a non-zero among them.
  return o->capture_default_str()->check(CLI::Validator(
      [](std::string& text) -> std::string {
        const std::string digits = text.substr(text.find_first_not_of('0'));
        if (digits.size() <= 4 && std::stoi(digits) <= kMaxThreads) return "";
        return fmt::format("at most {} threads, got '{}'", kMaxThreads, text);
      },
      "THREADS"));
}

CLI::Option* add_output_flag(CLI::App& cmd, std::string& path, const std::string& what,
                             const std::string& otherwise) {
  return cmd.add_option("-o,--output", path,
                        "write " + what + " here (default: " + otherwise + ")");
}

CLI::Option* add_stats_flag(CLI::App& cmd, std::string& path) {
  return cmd.add_option("--stats", path, "write the statistics as JSON");
}

CLI::Option* add_trace_flag(CLI::App& cmd, std::string& path) {
  return cmd.add_option("--trace", path, "write a Chrome trace-event JSON file (Perfetto)");
}

CLI::Option* add_report_flag(CLI::App& cmd, std::string& path) {
  return cmd.add_option("--report", path, "write the report as JSON");
}

CLI::Option* add_html_flag(CLI::App& cmd, std::string& path) {
  return cmd.add_option("--html", path, "write the report as an HTML page (docs/report.md)");
}

}  // namespace tessera::cli
