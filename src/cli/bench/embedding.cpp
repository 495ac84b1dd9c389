// `tessera bench embedding [--chips N] [--placement mod|table] [--topology line|ring|torus2d]
// [--tables T] [--rows R] [--dim D] [--bag L] [--batch B] [--zipf S] [--seed N] [--config C]
// [--threads K] [--json]`: the forward lookups of T tables on one processor's sparse core, or
// (N > 1) on every processor of N chips with the tables spread over them and the remote lookups
// an all-to-all over the packet fabric (embedding_bench.h: workload, bound and figures), with the
// host seconds the simulation took. The system (cores per chip, links, barrier) is --config's
// system section (else the built-in defaults) with --chips chips on one board in --topology.
#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/bench/benches.h"
#include "cli/bench/embedding_bench.h"
#include "cli/bench/exchange_flags.h"
#include "cli/bench/harness.h"
#include "cli/common_flags.h"
#include "common/error.h"
#include "common/thread_pool.h"
#include "system/machine_spec.h"

namespace tessera::bench {

namespace {

struct EmbeddingBenchArgs {
  EmbeddingBenchShape shape;
  int chips = 1;
  std::string placement = "mod";
  std::string topology = "ring";
  std::string config;
  int threads = cli::default_threads();
  bool json = false;
};

system::SystemSpec bench_system(const EmbeddingBenchArgs& a, system::SystemSpec s) {
  s.chips = s.chips_per_board = a.chips;
  s.boards = 1;
  s.failed_links.clear();
  set_topology(s, a.topology);
  system::validate_system_spec(s);
  return s;
}

void bench_embedding(const EmbeddingBenchArgs& a) {
  if (a.chips < 1) throw UsageError("--chips", std::to_string(a.chips) + ": at least 1");
  const system::ShardPlacement placement =
      system::shard_placement_from_name(a.placement, "--placement");
  const system::MachineSpec m = system::load_machine_spec(a.config);
  const core::CoreSpec& spec = m.core;
  const system::SystemSpec sys = a.chips > 1 ? bench_system(a, m.system) : m.system;
  EmbeddingBenchResult r;
  Timing t;
  if (a.chips == 1) {
    t = time_once([&] { r = run_embedding_bench(spec, a.shape); });
  } else {
    ThreadPool pool(a.threads);
    t = time_once([&] { r = run_sharded_embedding_bench(spec, sys, a.shape, placement, &pool); });
  }
  const EmbeddingBenchShape& s = a.shape;
  nlohmann::ordered_json j = {{"benchmark", "embedding"},
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
                              {"values_checked", r.values_checked}};
  if (a.chips > 1) {
    j["processors"] = r.processors;
    j["cores_per_chip"] = sys.cores_per_chip;
    j["placement"] = a.placement;
    j["topology"] = a.topology;
    j["link_gbytes_per_s"] = sys.link_gbytes_per_s;
    j["link_latency_ns"] = sys.link_latency_ns;
    j["hbm_bound_seconds"] = r.hbm_bound_seconds;
    j["exchange_bound_seconds"] = r.exchange_bound_seconds;
    j["exchange"] = {{"id_bytes", r.id_bytes},
                     {"row_bytes", r.exchange_row_bytes},
                     {"busiest_link_bytes", r.busiest_link_bytes},
                     {"max_hops", r.max_hops},
                     {"packets", r.packets}};
    j["supersteps"] = {{"route_seconds", r.route_seconds},
                       {"ids_seconds", r.ids_seconds},
                       {"gather_seconds", r.gather_seconds},
                       {"rows_seconds", r.rows_seconds},
                       {"combine_seconds", r.combine_seconds}};
    j["threads"] = a.threads;
  }
  j["host_seconds"] = t.wall;
  j["host_cpu_seconds"] = t.cpu;
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
  cmd.add_option("--chips", args->chips, "chips (more than 1: the tables spread over them)")
      ->capture_default_str();
  cmd.add_option("--placement", args->placement, "mod (row r on processor r mod P) or table")
      ->capture_default_str();
  cmd.add_option("--topology", args->topology, "line, ring or torus2d (--chips > 1)")
      ->capture_default_str();
  cmd.add_option("--tables", s.tables, "embedding tables")->capture_default_str();
  cmd.add_option("--rows", s.rows, "rows per table")->capture_default_str();
  cmd.add_option("--dim", s.dim, "fp32 words per row")->capture_default_str();
  cmd.add_option("--bag", s.bag, "ids per bag")->capture_default_str();
  cmd.add_option("--batch", s.batch, "bags per table")->capture_default_str();
  cmd.add_option("--zipf", s.zipf, "Zipf exponent of the ids (0: uniform)")->capture_default_str();
  cmd.add_option("--seed", s.seed, "the ids' generator seed")->capture_default_str();
  cli::add_config_flag(cmd, args->config);
  cli::add_threads_flag(cmd, args->threads);
  cli::add_json_flag(cmd, args->json);
  cmd.callback([args] { bench_embedding(*args); });
}

}  // namespace tessera::bench
