// `tessera config --schema [--json]`: every config key with type, default, unit, range and
//   description, collected by running the same reader functions that read a config file on an
//   empty ConfigReader::schema() (so the list cannot drift from the code).
// `tessera config --check FILE [--json]`: reads and validates FILE exactly as `tessera run` does
//   (unknown keys, types, ranges, cross-key constraints) and prints the machine it describes.
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/common_flags.h"
#include "common/config.h"
#include "core/spec.h"
#include "system/machine_spec.h"

namespace tessera::cli {

namespace {

// Every component's reader, in document order, is system::read_machine_spec: a new section is
// added there, and --schema, --check and every command's --config pick it up.

std::string human_bytes(int64_t bytes) {
  if (bytes >= (1ll << 30) && bytes % (1ll << 30) == 0) return fmt::format("{} GiB", bytes >> 30);
  if (bytes >= (1ll << 20) && bytes % (1ll << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= (1ll << 10) && bytes % (1ll << 10) == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

nlohmann::ordered_json summary_json(const std::string& path, const system::MachineSpec& m) {
  const core::CoreSpec& c = m.core;
  const system::SystemSpec& y = m.system;
  return {{"file", path},
          {"ok", true},
          {"core",
           {{"name", c.name},
            {"clock_hz", c.clock_hz},
            {"sublanes", c.sublanes},
            {"lanes", c.lanes},
            {"vector_regs", c.vector_regs},
            {"mxu_count", c.mxu_count},
            {"mxu_rows", c.mxu_rows},
            {"mxu_cols", c.mxu_cols},
            {"mxu_double_buffer", c.mxu_double_buffer},
            {"vmem_bytes", c.vmem_bytes},
            {"smem_words", c.smem_words},
            {"hbm_bytes", c.hbm_bytes},
            {"hbm_bytes_per_cycle", c.hbm_bytes_per_cycle},
            {"peak_macs_per_cycle", static_cast<int64_t>(c.mxu_count) * c.mxu_rows * c.mxu_cols}}},
          {"system",
           {{"chips", y.chips},
            {"cores_per_chip", y.cores_per_chip},
            {"processors", y.processors()},
            {"topology", system::topology_name(y.topology)}}}};
}

std::string summary_text(const std::string& path, const system::MachineSpec& m) {
  const core::CoreSpec& c = m.core;
  const system::SystemSpec& y = m.system;
  return fmt::format(
      "{}: ok\n"
      "  core '{}': {:g} MHz, {}{}x{} MXU{} ({}double-buffered), {}x{} vector unit, {} vregs\n"
      "  vector memory {}, scalar memory {} words, HBM {} at {:g} B/cycle ({:g} GB/s)\n"
      "  system: {} chip(s) x {} core(s), {}\n",
      path, c.name, c.clock_hz / 1e6, c.mxu_count > 1 ? fmt::format("{} x ", c.mxu_count) : "",
      c.mxu_rows, c.mxu_cols, c.mxu_count > 1 ? "s" : "", c.mxu_double_buffer ? "" : "not ",
      c.sublanes, c.lanes, c.vector_regs, human_bytes(c.vmem_bytes), c.smem_words,
      human_bytes(c.hbm_bytes), c.hbm_bytes_per_cycle, c.hbm_bytes_per_cycle * c.clock_hz / 1e9,
      y.chips, y.cores_per_chip, system::topology_name(y.topology));
}

}  // namespace

void register_config_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("config", "show the config schema, or validate a config file");
  struct Options {
    bool schema = false;
    bool json = false;
    std::string check;
  };
  auto opts = std::make_shared<Options>();
  auto* schema = cmd->add_flag("--schema", opts->schema,
                               "print every config key: type, default, unit, range, description");
  auto* check = cmd->add_option("--check", opts->check, "validate this config file")
                    ->check(CLI::ExistingFile);
  schema->excludes(check);
  add_json_flag(*cmd, opts->json);
  cmd->require_option(1, 2);
  cmd->callback([opts, schema, check] {
    if (*schema) {
      ConfigReader reader = ConfigReader::schema();
      system::read_machine_spec(reader);
      const auto& decls = reader.declarations();
      const std::string out =
          opts->json ? schema_to_json(decls).dump(2) + "\n" : schema_to_text(decls);
      std::fputs(out.c_str(), stdout);
      return;
    }
    if (!*check) throw CLI::RequiredError("--schema or --check FILE");
    ConfigReader reader = ConfigReader::from_file(opts->check);
    const system::MachineSpec specs = system::read_machine_spec(reader);
    reader.finish();
    const std::string out = opts->json ? summary_json(opts->check, specs).dump(2) + "\n"
                                       : summary_text(opts->check, specs);
    std::fputs(out.c_str(), stdout);
  });
}

}  // namespace tessera::cli
