// `tessera bench fabric [--chips N] [--topology line|ring|torus2d] [--bytes S] [--directions 1|2]
//   [--config FILE] [--loss R] [--seed X] [--threads T] [--json]`: the speed of the packet fabric
// simulator on the synthetic ring all-reduce (fabric/ring_allreduce.h: traffic posted straight to
// the fabric, no programs, timing-only payloads). With T >= 2 host threads the fabric runs in
// partitions of chips on the threads (fabric/engine.h "Partitions"); the results do not depend on
// T.
//   packets                    link transmissions simulated (retransmissions included)
//   events                     discrete events processed
//   host_seconds               host CPU seconds of the run (this thread, cli/bench/harness.h: at
//                              T = 1 the whole run's)
//   host_wall_seconds          host wall seconds of the run
//   exchange_windows           conservative windows the partitions ran (0 at T = 1)
//   packets_per_host_second    packets / host_seconds
//   sim_seconds, bound_seconds, efficiency   as in bench allreduce (bound = 2(n-1)/n S/(dB) +
//                              2(n-1) link latency)
// Defaults: 1024 chips as a 32 x 32 2-D torus, 64 MiB, one direction; link, packet and queue
// parameters from --config's system.* (else the built-in defaults, system_spec.h); --chips and
// --topology override the config's. torus2d dims: the factorisation closest to a square.
#include "fabric/fabric.h"

#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/bench/benches.h"
#include "cli/bench/exchange_flags.h"
#include "cli/bench/harness.h"
#include "cli/common_flags.h"
#include "common/error.h"
#include "common/thread_pool.h"
#include "fabric/ring_allreduce.h"
#include "system/system_spec.h"

namespace tessera::bench {

namespace {

struct FabricBenchArgs {
  ExchangeFlags exchange{.chips = 1024, .topology = "torus2d", .directions = 1};
  std::string config;
  double loss = -1;  // < 0: the config's
  uint64_t seed = 1;
  int threads = 1;
  bool json = false;
};

system::SystemSpec bench_system(const FabricBenchArgs& a) {
  system::SystemSpec s =
      a.config.empty() ? system::SystemSpec{} : system::load_system_spec(a.config);
  if (a.exchange.chips < 1) throw UsageError("bench fabric", "--chips must be positive");
  s.chips = s.chips_per_board = a.exchange.chips;
  s.boards = 1;
  s.cores_per_chip = 1;
  s.failed_links.clear();
  set_topology(s, a.exchange.topology);
  if (a.loss >= 0) s.loss_rate = a.loss;
  system::validate_system_spec(s);
  return s;
}

void bench_fabric(const FabricBenchArgs& a) {
  check_exchange_bytes(a.exchange.bytes);
  const system::SystemSpec s = bench_system(a);
  fabric::Fabric f(s, a.seed);
  std::unique_ptr<ThreadPool> pool;
  if (a.threads >= 2) {
    pool = std::make_unique<ThreadPool>(a.threads);
    f.set_workers(pool.get());
  }
  fabric::RingAllreduceResult r;
  const Timing t = time_once(
      [&] { r = fabric::run_ring_allreduce(f, a.exchange.bytes, a.exchange.directions); });
  const double host = t.cpu;
  const fabric::FabricStats& st = f.stats();
  nlohmann::ordered_json j;
  j["chips"] = s.chips;
  j["topology"] = system::topology_name(s.topology);
  if (s.topology == system::Topology::kTorus2d) j["dims"] = {s.dims_x, s.dims_y};
  j["bytes"] = a.exchange.bytes;
  j["directions"] = a.exchange.directions;
  j["steps"] = r.steps;
  j["packets"] = st.packets;
  j["events"] = st.events;
  j["threads"] = a.threads;
  j["host_seconds"] = host;
  j["host_wall_seconds"] = t.wall;
  j["exchange_windows"] = f.host_time().windows;
  j["packets_per_host_second"] = host > 0 ? static_cast<double>(st.packets) / host : 0.0;
  j["events_per_host_second"] = host > 0 ? static_cast<double>(st.events) / host : 0.0;
  j["sim_seconds"] = static_cast<double>(r.sim_ps) * 1e-12;
  j["bound_seconds"] = static_cast<double>(r.bound_ps) * 1e-12;
  j["efficiency"] = r.efficiency;
  j["link_bandwidth_gbps"] = s.link_gbytes_per_s;
  j["link_latency_ns"] = s.link_latency_ns;
  j["packet_payload_bytes"] = s.packet_payload_bytes;
  j["loss_rate"] = s.loss_rate;
  print_report(j, {.json = a.json, .json_indent = 2, .key_width = 26});
}

}  // namespace

void setup_fabric(CLI::App& cmd) {
  auto args = std::make_shared<FabricBenchArgs>();
  add_exchange_flags(cmd, args->exchange);
  cli::add_config_flag(cmd, args->config);
  cmd.add_option("--loss", args->loss, "physical packet loss rate (default: the config's)");
  cli::add_seed_flag(cmd, args->seed, "packet loss");
  cli::add_threads_flag(cmd, args->threads)
      ->description(
          "host threads simulating the fabric's partitions of chips (default 1); results "
          "do not depend on it");
  cli::add_json_flag(cmd, args->json);
  cmd.callback([args] { bench_fabric(*args); });
}

}  // namespace tessera::bench
