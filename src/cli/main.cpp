// The `tessera` command. The only place that turns errors into exit codes:
//   0 success, 1 tessera::Error (bad input: file, config, program, simulated fault), 2 bad flags,
//   3 unexpected internal error.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "common/error.h"

int main(int argc, char** argv) {
  CLI::App app{"tessera: a simulator and toolchain for neural-network training hardware"};
  app.require_subcommand(1);
  using namespace tessera::cli;
  register_asm_command(app);
  register_disasm_command(app);
  register_run_command(app);
  register_config_command(app);
  register_bench_command(app);
  register_map_command(app);
  register_isa_command(app);
  register_train_command(app);
  register_compile_command(app);
  register_adam_command(app);
  register_bench_bsp_commands(app);
  register_bench_fabric_command(app);
  register_bench_train_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "tessera: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera: internal error: %s\n", e.what());
    return 3;
  }
  return 0;
}
