// `tessera bench suite [--config C] [--only REGEX] [--seed S] [--json] [--html FILE]`: the
// standard workload suite (suite/row.h) on ONE core of the configured chip, each row against its
// roofline bound (core/roofline.h), its result checked against the host reference in chip numerics
// and the fp32 reference executor timed on the same inputs (suite/run_row.h). Rows run in the
// suite's order; --only keeps those whose name contains a match of REGEX (ECMAScript). Host
// seconds are CPU seconds of this thread (cli/bench/harness.h), one run each; host_seconds at the
// top is the whole command's. JSON: suite/suite_json.h, tagged "tessera-suite" (report/format.h).
// docs/suite.md describes the rows, the bound and the checks.
#include <cstdio>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/bench/benches.h"
#include "cli/bench/harness.h"
#include "cli/common_flags.h"
#include "common/error.h"
#include "common/file_io.h"
#include "htmlreport/page.h"
#include "report/format.h"
#include "runtime/run_config.h"
#include "suite/row.h"
#include "suite/run_row.h"
#include "suite/suite_json.h"

namespace tessera::bench {

namespace {

struct SuiteArgs {
  std::string config;
  std::string only;
  uint64_t seed = 1;
  bool json = false;
  std::string html;
};

// The suite's rows that --only selects; UsageError for a bad expression or one that selects none.
std::vector<suite::Row> selected_rows(const std::string& only) {
  std::vector<suite::Row> rows = suite::standard_rows();
  if (only.empty()) return rows;
  std::regex re;
  try {
    re = std::regex(only, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw UsageError("bench suite",
                     fmt::format("--only '{}' is not a regular expression: {}", only, e.what()));
  }
  std::erase_if(rows, [&](const suite::Row& r) { return !std::regex_search(r.name(), re); });
  if (rows.empty())
    throw UsageError("bench suite", fmt::format("--only '{}' selects no row", only));
  return rows;
}

void print_row(const suite::RowResult& r) {
  if (r.unsupported) {
    std::printf("%-28s not supported: %s\n", r.name.c_str(), r.unsupported->c_str());
    return;
  }
  std::printf(
      "%-28s %12lld cycles  bound %12.0f (%s)  x%-6.2f mxu %5.1f%%  host %.3f s  ref %.3f s\n",
      r.name.c_str(), static_cast<long long>(r.cycles), r.bound.cycles, core::to_string(r.bound.by),
      r.cycles_over_bound, 100 * r.mxu_utilization, r.host_seconds, r.ref_host_seconds);
  std::fflush(stdout);
}

void bench_suite(const SuiteArgs& a) {
  const std::vector<suite::Row> rows = selected_rows(a.only);
  const runtime::RunConfig config = runtime::load_run_config(a.config);
  std::optional<OutputFile> html;
  if (!a.html.empty()) html.emplace(a.html, "HTML report");
  const suite::HostClock clock = [](const std::function<void()>& body) {
    return time_once(body).cpu;
  };
  nlohmann::ordered_json j;
  j["config"] = config.spec.name;
  j["config_hash"] = config.hash;
  j["seed"] = a.seed;
  j["core"] = suite::core_json(suite::core_figures(config.spec));
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  const Timing total = time_once([&] {
    for (const suite::Row& row : rows) {
      const suite::RowResult r = suite::run_row(row, config.spec, a.seed, clock);
      if (!a.json) print_row(r);
      out.push_back(suite::row_json(r));
    }
  });
  j["rows"] = out;
  j["host_seconds"] = total.cpu;
  j["host_wall_seconds"] = total.wall;
  const nlohmann::ordered_json tagged = report::tagged("suite", j);
  if (a.json) print_report(tagged, {.json = true, .json_indent = 2});
  if (html)
    htmlreport::write_report({a.html, "bench suite", htmlreport::Kind::kSuite, tagged}, *html);
}

}  // namespace

void setup_suite(CLI::App& cmd) {
  auto args = std::make_shared<SuiteArgs>();
  cli::add_config_flag(cmd, args->config);
  cmd.add_option("--only", args->only,
                 "run only the rows whose name contains a match of this regular expression");
  cli::add_seed_flag(cmd, args->seed, "rows' random inputs")->capture_default_str();
  cli::add_json_flag(cmd, args->json);
  cli::add_html_flag(cmd, args->html);
  cmd.callback([args] { bench_suite(*args); });
}

}  // namespace tessera::bench
