// `tessera run prog.s|prog.bin [--config C] [--trace t.json] [--stats s.json] [--functional]
//  [--max-bundles N] [--dump-vmem ROW:COUNT ...] [--dump-hex] [--pe bf16|term-serial]`: runs a
// program on one tensor core (--pe overrides core.mxu.pe; term-serial adds the "mxu.term" group).
// The timed core (default) prints a summary of its statistics; --stats writes the same tree as
// JSON and --trace a Chrome trace-event file (one track per unit; opens in Perfetto).
// --functional runs the functional interpreter instead (no timing: bundles, ops and traffic only).
// Without --config the built-in CoreSpec defaults (tpu-v2-like) are used. A simulated fault is an
// error (exit 1); the trace up to the fault is still written.
#include <bit>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/cli_output.h"
#include "cli/commands.h"
#include "cli/common_flags.h"
#include "common/config.h"
#include "common/error.h"
#include "core/core.h"
#include "core/fault.h"
#include "core/functional.h"
#include "core/term_mxu_report.h"
#include "htmlreport/page.h"
#include "isa/assembler.h"
#include "report/format.h"
#include "report/trace.h"
#include "system/machine_spec.h"

namespace tessera::cli {

namespace {

struct RunArgs {
  std::string program;
  std::string config;
  std::string trace;
  std::string stats;
  std::string html;
  bool functional = false;
  bool dump_hex = false;
  int64_t max_bundles = 1'000'000'000;
  std::vector<std::string> dump_vmem;
  std::string pe;  // "", "bf16", "term-serial": overrides core.mxu.pe
};

void dump_vmem(const core::ArchState& s, const core::CoreSpec& spec, const std::string& arg,
               bool hex) {
  const auto colon = arg.find(':');
  int64_t row = 0, count = 0;
  try {
    if (colon == std::string::npos) throw std::invalid_argument(arg);
    size_t used = 0;
    row = std::stoll(arg.substr(0, colon), &used);
    if (used != colon) throw std::invalid_argument(arg);
    count = std::stoll(arg.substr(colon + 1), &used);
    if (used != arg.size() - colon - 1) throw std::invalid_argument(arg);
  } catch (const std::exception&) {
    throw UsageError("--dump-vmem " + arg, "expected ROW:COUNT (two integers)");
  }
  if (row < 0 || count < 0 || row > spec.vmem_rows() || count > spec.vmem_rows() - row)
    throw UsageError("--dump-vmem " + arg,
                     fmt::format("rows outside vector memory (0..{})", spec.vmem_rows() - 1));
  for (int64_t r = row; r < row + count; ++r) {
    std::string line = fmt::format("vmem row {}:", r);
    for (int l = 0; l < spec.lanes; ++l) {
      const uint32_t w = s.vmem[r * spec.lanes + l];
      line += hex ? fmt::format(" {:08x}", w) : fmt::format(" {:.9g}", std::bit_cast<float>(w));
    }
    std::printf("%s\n", line.c_str());
  }
}

void print_header(const RunArgs& a, const core::CoreSpec& spec, const isa::Program& p) {
  const std::string mxus =
      spec.mxu_count > 1
          ? fmt::format("{} x {} x {} MXUs", spec.mxu_count, spec.mxu_rows, spec.mxu_cols)
          : fmt::format("{} x {} MXU", spec.mxu_rows, spec.mxu_cols);
  std::printf("%s: %zu bundles on core \"%s\" (%d x %d vector unit, %s, %.0f MHz)%s\n",
              a.program.c_str(), p.code.size(), spec.name.c_str(), spec.sublanes, spec.lanes,
              mxus.c_str(), spec.clock_hz / 1e6, a.functional ? ", functional" : "");
}

// The --stats JSON (the statistics tagged "tessera-stats", with the program and the config name)
// and the --html page of it.
void write_stats(const RunArgs& a, const core::CoreSpec& spec, const report::StatGroup& g) {
  nlohmann::ordered_json body{{"program", a.program}, {"config", spec.name}};
  const nlohmann::json stats = g.to_json();
  for (const auto& [k, v] : stats.items()) body[k] = v;
  const nlohmann::ordered_json j = report::tagged("stats", body);
  if (!a.stats.empty()) write_json(a.stats, j);
  if (a.html.empty()) return;
  OutputFile html(a.html, "HTML report");
  htmlreport::write_report({a.html, "run " + a.program, htmlreport::Kind::kStats, j}, html);
}

void run_functional(const RunArgs& a, const core::CoreSpec& spec, const isa::Program& p) {
  core::FunctionalCore f(spec, p, core::RunOptions{a.max_bundles});
  f.run();
  report::StatGroup g;
  g.set_int("bundles", f.bundles(), "bundles");
  core::report_ops(f.machine(), g);
  core::report_term_mxu(spec, f.machine().mxu().stats(), g.group("mxu"));
  core::report_events(f.machine(), f.bundles(), g);
  std::printf("halted after %lld bundles\n%s", static_cast<long long>(f.bundles()),
              g.to_text().c_str());
  write_stats(a, spec, g);
  for (const auto& d : a.dump_vmem) dump_vmem(f.state(), spec, d, a.dump_hex);
}

void run_timed(const RunArgs& a, const core::CoreSpec& spec, const isa::Program& p) {
  std::unique_ptr<report::ChromeTrace> trace;
  std::optional<OutputFile> trace_file;  // opened before the run: an unwritable path fails now
  core::TimedOptions o;
  o.max_bundles = a.max_bundles;
  if (!a.trace.empty()) {
    trace = std::make_unique<report::ChromeTrace>(spec.name, spec.clock_hz);
    trace_file.emplace(a.trace, "trace file");
    o.trace = trace.get();
  }
  core::Core c(spec, p, o);
  try {
    c.run();
  } catch (const core::SimFault&) {
    if (trace) trace->write(*trace_file);
    throw;
  }
  report::StatGroup g = c.stats();
  core::report_term_mxu(spec, c.machine().mxu().stats(), g.group("mxu"));
  std::printf("halted after %lld bundles in %lld cycles (%.3f us)\n%s",
              static_cast<long long>(c.bundles()), static_cast<long long>(c.cycles()),
              g.get("seconds") * 1e6, g.to_text().c_str());
  write_stats(a, spec, g);
  if (trace) trace->write(*trace_file);
  for (const auto& d : a.dump_vmem) dump_vmem(c.state(), spec, d, a.dump_hex);
}

}  // namespace

void register_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd =
      app.add_subcommand("run", "run a program (assembly or binary image) on one tensor core");
  cmd->add_option("program", args->program, "assembly source (.s) or binary image")->required();
  add_config_flag(*cmd, args->config);
  add_trace_flag(*cmd, args->trace);
  add_stats_flag(*cmd, args->stats);
  add_html_flag(*cmd, args->html);
  cmd->add_flag("--functional", args->functional, "run the functional interpreter (no timing)");
  check_positive_integer(cmd->add_option("--max-bundles", args->max_bundles,
                                         "fault after this many bundles (runaway loops)"));
  cmd->add_option("--dump-vmem", args->dump_vmem,
                  "print vector memory rows ROW:COUNT after the run (as fp32)");
  cmd->add_flag("--dump-hex", args->dump_hex, "print dumped words in hex instead of fp32");
  cmd->add_option("--pe", args->pe, "MXU processing element (overrides core.mxu.pe)")
      ->check(CLI::IsMember({"bf16", "term-serial"}));
  cmd->callback([args] {
    core::CoreSpec spec = system::load_machine_spec(args->config).core;
    if (!args->pe.empty())
      spec.mxu_pe = args->pe == "term-serial" ? core::MxuPe::TermSerial : core::MxuPe::Bf16;
    isa::AsmOptions o;
    o.scalar_regs = spec.scalar_regs;
    o.vector_regs = spec.vector_regs;
    o.mask_regs = spec.mask_regs;
    o.mxus = spec.mxu_count;
    const isa::Program p = isa::load_program(args->program, o);
    print_header(*args, spec, p);
    if (args->functional)
      run_functional(*args, spec, p);
    else
      run_timed(*args, spec, p);
  });
}

}  // namespace tessera::cli
