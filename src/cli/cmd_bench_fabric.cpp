// `tessera bench fabric [--chips N] [--topology line|ring|torus2d] [--bytes S] [--directions 1|2]
//   [--config FILE] [--loss R] [--seed X] [--json]`: the speed of the packet fabric simulator on
//   the
// synthetic ring all-reduce (fabric/ring_allreduce.h: traffic posted straight to the fabric, no
// programs, timing-only payloads).
//   packets                    link transmissions simulated (retransmissions included)
//   events                     discrete events processed
//   host_seconds               host CPU seconds of the run (this thread)
//   packets_per_host_second    packets / host_seconds
//   sim_seconds, bound_seconds, efficiency   as in bench allreduce (bound = 2(n-1)/n S/(dB) +
//                              2(n-1) link latency)
// Defaults: 1024 chips as a 32 x 32 2-D torus, 64 MiB, one direction; link, packet and queue
// parameters from --config's system.* (else the built-in defaults, system_spec.h); --chips and
// --topology override the config's. torus2d dims: the factorisation closest to a square.
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/bench_clock.h"
#include "cli/commands.h"
#include "common/error.h"
#include "fabric/fabric.h"
#include "fabric/ring_allreduce.h"
#include "system/system_spec.h"

namespace tessera::cli {

namespace {

struct FabricBenchArgs {
  int chips = 1024;
  std::string topology = "torus2d";
  uint64_t bytes = 64ull << 20;
  int directions = 1;
  std::string config;
  double loss = -1;  // < 0: the config's
  uint64_t seed = 1;
  bool json = false;
};

system::SystemSpec bench_system(const FabricBenchArgs& a) {
  system::SystemSpec s =
      a.config.empty() ? system::SystemSpec{} : system::load_system_spec(a.config);
  if (a.chips < 1) throw Error("bench fabric", "--chips must be positive");
  s.chips = s.chips_per_board = a.chips;
  s.boards = 1;
  s.cores_per_chip = 1;
  s.failed_links.clear();
  s.topology = a.topology == "ring"   ? system::Topology::kRing
               : a.topology == "line" ? system::Topology::kLine
                                      : system::Topology::kTorus2d;
  int x = 1;
  for (int d = 1; d * d <= a.chips; ++d)
    if (a.chips % d == 0) x = d;
  s.dims_y = x;
  s.dims_x = a.chips / x;
  if (a.loss >= 0) s.loss_rate = a.loss;
  system::validate_system_spec(s);
  return s;
}

void bench_fabric(const FabricBenchArgs& a) {
  const system::SystemSpec s = bench_system(a);
  fabric::Fabric f(s, a.seed);
  const double c0 = thread_cpu_seconds();
  const fabric::RingAllreduceResult r = fabric::run_ring_allreduce(f, a.bytes, a.directions);
  const double host = thread_cpu_seconds() - c0;
  const fabric::FabricStats& st = f.stats();
  nlohmann::ordered_json j;
  j["chips"] = s.chips;
  j["topology"] = system::topology_name(s.topology);
  if (s.topology == system::Topology::kTorus2d) j["dims"] = {s.dims_x, s.dims_y};
  j["bytes"] = a.bytes;
  j["directions"] = a.directions;
  j["steps"] = r.steps;
  j["packets"] = st.packets;
  j["events"] = st.events;
  j["host_seconds"] = host;
  j["packets_per_host_second"] = host > 0 ? static_cast<double>(st.packets) / host : 0.0;
  j["events_per_host_second"] = host > 0 ? static_cast<double>(st.events) / host : 0.0;
  j["sim_seconds"] = static_cast<double>(r.sim_ps) * 1e-12;
  j["bound_seconds"] = static_cast<double>(r.bound_ps) * 1e-12;
  j["efficiency"] = r.efficiency;
  j["link_bandwidth_gbps"] = s.link_gbytes_per_s;
  j["link_latency_ns"] = s.link_latency_ns;
  j["packet_payload_bytes"] = s.packet_payload_bytes;
  j["loss_rate"] = s.loss_rate;
  if (a.json) {
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  for (const auto& [k, v] : j.items()) std::printf("%-26s %s\n", k.c_str(), v.dump().c_str());
}

}  // namespace

void register_bench_fabric_command(CLI::App& app) {
  CLI::App* bench = app.get_subcommand("bench");
  auto args = std::make_shared<FabricBenchArgs>();
  auto* cmd =
      bench->add_subcommand("fabric", "packet fabric simulator speed: synthetic ring all-reduce");
  cmd->add_option("--chips", args->chips, "chips")->capture_default_str();
  cmd->add_option("--topology", args->topology, "line | ring | torus2d")
      ->check(CLI::IsMember({"line", "ring", "torus2d"}))
      ->capture_default_str();
  cmd->add_option("--bytes", args->bytes, "bytes all-reduced (a multiple of 4)")
      ->capture_default_str();
  cmd->add_option("--directions", args->directions, "1: one way round the ring; 2: half each way")
      ->check(CLI::IsMember({1, 2}))
      ->capture_default_str();
  cmd->add_option("--config", args->config, "system config file (system.* keys)");
  cmd->add_option("--loss", args->loss, "override the physical loss rate");
  cmd->add_option("--seed", args->seed, "loss RNG seed")->capture_default_str();
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->callback([args] { bench_fabric(*args); });
}

}  // namespace tessera::cli
