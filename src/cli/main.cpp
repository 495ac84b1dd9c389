// The `tessera` command. The only place that turns errors into exit codes:
//   0 success, 1 tessera::Error (bad input: file, config, program, simulated fault), 2 bad flags,
//   3 unexpected internal error.
// Under `mpirun -n R` (system/mpi_communicator.h) every rank runs the same command; only rank 0
// prints to stdout. A system::CollectiveError (thrown identically by every rank) is printed once,
// by rank 0, and every rank exits 1; any other error on one rank is printed with its rank and ends
// all ranks through MPI_Abort (another rank may be waiting for it in a collective).
#include <cstdio>
#include <exception>

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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const tessera::system::CollectiveError& e) {
    if (mpi.rank() == 0) std::fprintf(stderr, "tessera: error: %s\n", e.what());
    return 1;
  } catch (const tessera::Error& e) {
    return fail(mpi, "error", e.what(), 1);
  } catch (const std::exception& e) {
    return fail(mpi, "internal error", e.what(), 3);
  }
  return 0;
}
