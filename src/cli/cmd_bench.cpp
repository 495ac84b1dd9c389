// `tessera bench <name>`: measured figures, side by side with a reference. Each benchmark lives in
// cli/bench/<name>.cpp, measures with cli/bench/harness.h, and is registered by one row here.
#include <CLI/CLI.hpp>

#include "cli/bench/benches.h"
#include "cli/commands.h"

namespace tessera::cli {

namespace {

// In the order `tessera bench --help` lists them.
constexpr bench::BenchCommand kBenchCommands[] = {
    {"mxu", "the GEMM program on the simulated MXU vs OpenBLAS sgemm (1 thread)", bench::setup_mxu},
    {"sim", "simulated bundles per host second on a vector-heavy program", bench::setup_sim},
    {"pe", "host speed of the fast term-serial PE model vs the bit-parallel MXU model",
     bench::setup_pe},
    {"adam", "one Adam step: the Adam unit vs the vector unit (bytes, cycles)", bench::setup_adam},
    {"compile", "compile time of one all-reduce image (+index patching) vs one image per processor",
     bench::setup_compile},
    {"allreduce", "the generated ring all-reduce on the timed multi-chip system vs its bound",
     bench::setup_allreduce},
    {"fabric", "packet fabric simulator speed: synthetic ring all-reduce", bench::setup_fabric},
    {"train", "host seconds per training step: simulated chip vs fp32 host reference",
     bench::setup_train},
    {"suite", "the standard workload suite on one core vs its roofline bound", bench::setup_suite},
    {"embedding", "embedding lookups on the sparse core vs the HBM row-traffic bound",
     bench::setup_embedding},
};

}  // namespace

void register_bench_command(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "measured figures, side by side with a reference");
  bench->require_subcommand(1);
  for (const bench::BenchCommand& b : kBenchCommands)
    b.setup(*bench->add_subcommand(b.name, b.help));
}

}  // namespace tessera::cli
