// `tessera bench sim [--config C] [--iterations N] [--reps R] [--json]`: simulated bundles per host
// second on a vector-heavy streaming program (kernels/vector_stream.h): the best of R runs of
// Core::run (CPU seconds of this thread, cli/bench/harness.h), each on a freshly built Core.
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/bench/benches.h"
#include "cli/bench/harness.h"
#include "cli/common_flags.h"
#include "common/error.h"
#include "core/core.h"
#include "kernels/vector_stream.h"
#include "system/machine_spec.h"

namespace tessera::bench {

namespace {

struct SimArgs {
  std::string config;
  int64_t iterations = 200000;
  int reps = 3;
  bool json = false;
};

void bench_sim(const SimArgs& a) {
  if (a.reps < 1) throw UsageError("bench sim", "--reps must be positive");
  const core::CoreSpec spec = system::load_machine_spec(a.config).core;
  const kernels::VectorStream vs = kernels::make_vector_stream(spec, a.iterations);
  std::unique_ptr<core::Core> core;
  const Timing t = best_of(
      a.reps, [&] { core = std::make_unique<core::Core>(spec, vs.program); }, [&] { core->run(); });
  const int64_t bundles = core->bundles();
  nlohmann::json j;
  j["bundles_per_second"] = static_cast<double>(bundles) / t.cpu;
  j["bundles"] = bundles;
  j["cycles"] = core->cycles();
  j["host_seconds"] = t.cpu;
  j["host_wall_seconds"] = t.wall;
  j["program"] = "vector stream: vld + 2 vfma.f32 + vst per bundle";
  j["config"] = spec.name;
  print_report(j, {.json = a.json, .key_width = 18});
}

}  // namespace

void setup_sim(CLI::App& cmd) {
  auto args = std::make_shared<SimArgs>();
  cli::add_config_flag(cmd, args->config);
  cmd.add_option("--iterations", args->iterations, "loop trips (8 bundles each)")
      ->capture_default_str();
  add_reps_flag(cmd, args->reps, "best time counts");
  cli::add_json_flag(cmd, args->json);
  cmd.callback([args] { bench_sim(*args); });
}

}  // namespace tessera::bench
