// `tessera report RUN.json [MORE.json ...] -o report.html [--trace t.json]`: one self-contained
// HTML page of one or more tessera JSON reports (train --report, run --stats, bench allreduce
// --json, map --out, map bench --out), runs side by side, with the unit-activity timeline of a
// `run --trace` file (docs/report.md).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/common_flags.h"
#include "htmlreport/page.h"

namespace tessera::cli {

void register_report_command(CLI::App& app) {
  struct Args {
    std::vector<std::string> inputs;
    std::string out, trace;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("report", "write an HTML report of tessera JSON reports");
  cmd->add_option("reports", a->inputs, "JSON reports (train, run --stats, bench allreduce, map)")
      ->required();
  add_output_flag(*cmd, a->out, "the HTML page")->required();
  cmd->add_option("--trace", a->trace, "a Chrome trace (run --trace) to draw as a timeline");
  cmd->callback([a] {
    htmlreport::write_report(a->inputs, a->trace, a->out);
    std::printf("%s\n", a->out.c_str());
  });
}

}  // namespace tessera::cli
