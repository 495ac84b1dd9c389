// The `tessera` command. The only place that turns errors into exit codes:
//   0 success, 1 tessera::Error (bad input: file, config, program, simulated fault), 2 bad command
//   line (a CLI::ParseError or a tessera::UsageError), 3 unexpected internal error (always a bug).
// Standard output is flushed and checked at the end: a failed write is an error (exit 1).
// Under `mpirun -n R` (system/mpi_communicator.h) every rank runs the same command; only rank 0
// prints to stdout. A system::CollectiveError (thrown identically by every rank) is printed once,
// by rank 0, and every rank exits 1; any other error on one rank is printed with its rank and ends
// all ranks through MPI_Abort (another rank may be waiting for it in a collective).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "common/error.h"
#include "numerics/host_cpu.h"
#include "system/mpi_communicator.h"

namespace {

// Prints `what` ("error" or "internal error") and returns `code`, or aborts every rank (see above).
int fail(tessera::system::MpiSession& mpi, const char* what, const char* message, int code) {
  if (mpi.size() == 1) {
    std::fprintf(stderr, "tessera: %s: %s\n", what, message);
    return code;
  }
  std::fprintf(stderr, "tessera: %s (rank %d of %d): %s\n", what, mpi.rank(), mpi.size(), message);
  std::fflush(stderr);
  mpi.abort(code);
}

// The first word of the command line that is neither an option of the app nor its value, if it
// names no command: "unknown command 'foo' (commands: asm, ...)"; empty when the command is known
// or absent (the parser reports those).
std::string unknown_command(CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--vector-isa") {
      ++i;
      continue;
    }
    if (arg.starts_with("-")) continue;
    std::string names;
    for (const CLI::App* c : app.get_subcommands([](const CLI::App*) { return true; })) {
      if (c->get_name() == arg) return "";
      names += (names.empty() ? "" : ", ") + c->get_name();
    }
    return "unknown command '" + arg + "' (commands: " + names + ")";
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  tessera::system::MpiSession mpi(&argc, &argv);
  if (mpi.rank() != 0 && std::freopen("/dev/null", "w", stdout) == nullptr) return 3;
  CLI::App app{"tessera: a simulator and toolchain for neural-network training hardware"};
  app.require_subcommand(1);
  app.fallthrough();  // options of the app (--vector-isa) also after the command
  // Caps the host vector instructions the numerics use (results are bit-identical at every
  // setting; only speed changes). Before or after the command (fallthrough).
  app.add_option_function<std::string>(
         "--vector-isa",
         [](const std::string& name) {
           tessera::numerics::set_vector_isa_cap(*tessera::numerics::parse_vector_isa(name));
         },
         "widest host vector instructions to use: auto (default: the widest the host has), avx512, "
         "avx2 or portable; "
         "results are the same at every setting")
      ->check(CLI::IsMember({"auto", "avx512", "avx2", "portable"}));
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
  register_report_command(app);
  register_generate_command(app);
  register_import_command(app);
  register_infer_command(app);
  if (const std::string e = unknown_command(app, argc, argv); !e.empty()) {
    std::fprintf(stderr, "tessera: error: %s\n", e.c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const tessera::UsageError& e) {
    return fail(mpi, "error", e.what(), 2);
  } catch (const tessera::system::CollectiveError& e) {
    if (mpi.rank() == 0) std::fprintf(stderr, "tessera: error: %s\n", e.what());
    return 1;
  } catch (const tessera::Error& e) {
    return fail(mpi, "error", e.what(), 1);
  } catch (const std::exception& e) {
    return fail(mpi, "internal error", e.what(), 3);
  }
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    const int err = errno;
    std::fprintf(stderr, "tessera: error: writing standard output: %s\n", std::strerror(err));
    return 1;
  }
  return 0;
}
