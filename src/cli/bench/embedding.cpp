// `tessera bench embedding [--chips 1] [--tables T] [--rows R] [--dim D] [--bag L] [--batch B]
// [--zipf S] [--seed N] [--config C] [--json]`: the forward lookups of T tables on one processor's
// sparse core (embedding_bench.h: workload, bound and figures), with the host seconds the
// simulation took.
#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/bench/benches.h"
#include "cli/bench/embedding_bench.h"
#include "cli/bench/harness.h"
#include "cli/common_flags.h"
#include "common/error.h"
#include "system/machine_spec.h"

namespace tessera::bench {

namespace {

struct EmbeddingBenchArgs {
  EmbeddingBenchShape shape;
  int chips = 1;
  std::string config;
  bool json = false;
};

void bench_embedding(const EmbeddingBenchArgs& a) {
  if (a.chips != 1)
    throw UsageError("--chips",
                     std::to_string(a.chips) + ": one chip only (tables over chips are not built)");
  const core::CoreSpec spec = system::load_machine_spec(a.config).core;
  EmbeddingBenchResult r;
  const Timing t = time_once([&] { r = run_embedding_bench(spec, a.shape); });
  const EmbeddingBenchShape& s = a.shape;
  const nlohmann::ordered_json j = {{"benchmark", "embedding"},
                                    {"config", a.config.empty() ? "defaults" : a.config},
                                    {"chips", a.chips},
                                    {"tables", s.tables},
                                    {"rows", s.rows},
                                    {"dim", s.dim},
                                    {"bag", s.bag},
                                    {"batch", s.batch},
                                    {"zipf", s.zipf},
                                    {"seed", s.seed},
                                    {"lookups", r.lookups},
                                    {"sim_cycles", r.sim_cycles},
                                    {"sim_seconds", r.sim_seconds},
                                    {"row_bytes", r.row_bytes},
                                    {"bound_seconds", r.bound_seconds},
                                    {"efficiency", r.efficiency},
                                    {"lookups_per_sim_second", r.lookups_per_sim_second},
                                    {"row_stream_limit", r.row_stream_limit},
                                    {"values_checked", r.values_checked},
                                    {"host_seconds", t.wall},
                                    {"host_cpu_seconds", t.cpu}};
  if (a.json) {
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  for (const auto& [k, v] : j.items()) std::printf("%s %s\n", k.c_str(), v.dump().c_str());
}

}  // namespace

void setup_embedding(CLI::App& cmd) {
  auto args = std::make_shared<EmbeddingBenchArgs>();
  EmbeddingBenchShape& s = args->shape;
  cmd.add_option("--chips", args->chips, "chips (1: tables over chips are not built)")
      ->capture_default_str();
  cmd.add_option("--tables", s.tables, "embedding tables")->capture_default_str();
  cmd.add_option("--rows", s.rows, "rows per table")->capture_default_str();
  cmd.add_option("--dim", s.dim, "fp32 words per row")->capture_default_str();
  cmd.add_option("--bag", s.bag, "ids per bag")->capture_default_str();
  cmd.add_option("--batch", s.batch, "bags per table")->capture_default_str();
  cmd.add_option("--zipf", s.zipf, "Zipf exponent of the ids (0: uniform)")->capture_default_str();
  cmd.add_option("--seed", s.seed, "the ids' generator seed")->capture_default_str();
  cli::add_config_flag(cmd, args->config);
  cli::add_json_flag(cmd, args->json);
  cmd.callback([args] { bench_embedding(*args); });
}

}  // namespace tessera::bench
