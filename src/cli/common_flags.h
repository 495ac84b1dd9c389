// The flags several commands share, each declared here once with one help text. A command adds
// the ones it takes to its CLI::App and binds them to fields of its own argument struct:
//   add_config_flag(*cmd, args->config);
//   add_json_flag(*cmd, args->json);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cli/bench/integer_flags.h"
#include "common/error.h"
#include "graph/model.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace tessera::cli {

// --config FILE: the machine config (core.* and system.* keys, `tessera config --schema`); left
// empty when not given, which means the built-in defaults.
CLI::Option* add_config_flag(CLI::App& cmd, std::string& path);

// --set KEY=VALUE, repeatable: overrides one config key of --config (config_overrides).
CLI::Option* add_set_flag(CLI::App& cmd, std::vector<std::string>& sets);

// The --set flags as flat config overrides {KEY: VALUE}: VALUE parsed as JSON when it is JSON
// (numbers, true/false, quoted strings), else taken as a string. Error for an item without '='
// or with an empty KEY.
nlohmann::json config_overrides(const std::vector<std::string>& sets);

// The model a --model value names: a path ending in ".json" is a model file (its errors are bad
// input, exit 1); anything else a zoo name, and an unknown one is a bad flag value (UsageError
// "--model: unknown model 'x' (known: ...)").
graph::ModelSpec model_from_flag(const std::string& name_or_path);

// Runs `parse`, which reads the value of `flag`, and reports its tessera::Error as a UsageError
// naming the flag: a value the command refuses is a command-line error.
template <typename F>
auto parse_flag_value(const std::string& flag, F&& parse) {
  try {
    return parse();
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(flag, e.why());
  }
}

// --json: print JSON on standard output instead of text.
CLI::Option* add_json_flag(CLI::App& cmd, bool& json);

// --seed S: the seed of the command's random choices; `what` names them ("loss and inputs").
CLI::Option* add_seed_flag(CLI::App& cmd, uint64_t& seed, const std::string& what);

// -o,--output FILE: the file the command writes `what` to; `otherwise` says what happens when
// the flag is not given ("standard output").
CLI::Option* add_output_flag(CLI::App& cmd, std::string& path, const std::string& what,
                             const std::string& otherwise = "standard output");

// --threads T: host threads for the processors of a many-chip run (system/system.h "Host
// threads"); `threads` should hold default_threads(). A value outside 1..kMaxThreads is a
// UsageError naming the flag.
inline constexpr int kMaxThreads = 1024;
int default_threads();  // the host's cores (std::thread::hardware_concurrency; 1 if unknown)
CLI::Option* add_threads_flag(CLI::App& cmd, int& threads);

// JSON documents a command writes beside its text output.
CLI::Option* add_stats_flag(CLI::App& cmd, std::string& path);   // --stats FILE: statistics
CLI::Option* add_trace_flag(CLI::App& cmd, std::string& path);   // --trace FILE: Chrome trace
CLI::Option* add_report_flag(CLI::App& cmd, std::string& path);  // --report FILE: run report
CLI::Option* add_html_flag(CLI::App& cmd, std::string& path);    // --html FILE: HTML report

}  // namespace tessera::cli
