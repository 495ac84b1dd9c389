// `tessera bench allreduce --chips N --bytes S --topology line|ring|torus2d [--rings K]
//   [--directions 1|2] [--link-bandwidth GBps] [--link-latency ns] [--cores-per-chip C] [--loss R]
//   [--seed X] [--check] [--values] [--split-phase] [--algorithm ring|torus] [--json]`: the
// generated all-reduce of S bytes (fp32 words) over every core of every chip on the timed system
// (system/system.h) with its packet fabric.
//   sim_seconds     simulated time until every processor halted
//   bound_seconds   2(n-1)/n * S / (d * B) + 2(n-1) * link latency: the bandwidth-optimal ring
//                   all-reduce over n processors with d directions (each carrying S/d), B = link
//                   bandwidth, one link latency per step
//   efficiency      bound_seconds / sim_seconds
//   host_seconds    host CPU seconds of System::run (rank 0's under mpirun; host_wall_seconds:
//                   wall; cli/bench/harness.h)
//   mpi_ranks       processes the processors are spread over (`mpirun -n R`; system/system.h)
//   superstep_spans per superstep of the all-reduce (system/system.h SuperstepSpan), simulated
//                   seconds: {"arrived": [..], "posted": [..], "delivered": [..],
//                   "released": [..]}
//   host            how the host threads (--threads T per rank, default the host's cores) and
//                   the ranks spent host time (system::System::host_json); results do not depend
//                   on T
// Without --check or --values the exchange runs timing-only (sizes, not values: identical times,
// no memory for N copies of S); --check moves the values and compares every processor's vector
// with the host reference bit for bit (every rank draws every processor's input for it);
// --values moves the values without the reference, each rank drawing and holding only its own
// processors' inputs (memory follows the processors: system/system.h "Distribution"). Defaults:
// directions 2 (every shipped topology has backward links), 1 ring per direction, barrier
// placement and the rest from system.* defaults (system_spec.h).
// --split-phase: ring steps end in xsync / xwait (compiler/collectives.h split_phase); JSON
// split_phase.
// --algorithm ring|torus (default ring): torus = the torus-dimension all-reduce over the machine's
// grid (system/collective_grid.h: cores per chip x dims_x x dims_y, or cores per chip x chips), 2
// sum (d_i - 1) supersteps; JSON algorithm, grid. bound_seconds keeps the ring formula above for
// both (so efficiency compares them against the same figure), with the latency term 2(n-1) link
// latencies.
#include <algorithm>
#include <bit>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/bench/benches.h"
#include "cli/bench/exchange_flags.h"
#include "cli/bench/harness.h"
#include "cli/common_flags.h"
#include "common/error.h"
#include "compiler/collectives.h"
#include "htmlreport/page.h"
#include "report/format.h"
#include "system/collective_grid.h"
#include "system/system.h"

namespace tessera::bench {

namespace {

struct AllReduceArgs {
  ExchangeFlags exchange;
  int cores_per_chip = 1;
  int rings = 1;
  double link_bandwidth = 0;  // 0: the system default
  double link_latency = -1;   // <0: the system default
  double loss = 0;
  uint64_t seed = 0;
  bool check = false;
  bool values = false;
  bool json = false;
  bool split_phase = false;
  std::string algorithm = "ring";
  std::string html;
  int threads = cli::default_threads();
};

// The spans of every superstep as one array per instant, in seconds.
nlohmann::ordered_json superstep_spans_json(const std::vector<system::SuperstepSpan>& spans) {
  std::vector<double> arrived, posted, delivered, released;
  auto s_of = [](fabric::Picos ps) { return static_cast<double>(ps) * 1e-12; };
  for (const system::SuperstepSpan& s : spans) {
    arrived.push_back(s_of(s.arrived));
    posted.push_back(s_of(s.posted));
    delivered.push_back(s_of(s.delivered));
    released.push_back(s_of(s.released));
  }
  return {
      {"arrived", arrived}, {"posted", posted}, {"delivered", delivered}, {"released", released}};
}

system::SystemSpec allreduce_system(const AllReduceArgs& a) {
  system::SystemSpec s;
  s.chips = a.exchange.chips;
  s.cores_per_chip = a.cores_per_chip;
  s.chips_per_board = a.exchange.chips;
  s.boards = 1;
  set_topology(s, a.exchange.topology);
  if (a.link_bandwidth > 0) s.link_gbytes_per_s = a.link_bandwidth;
  if (a.link_latency >= 0) s.link_latency_ns = a.link_latency;
  s.loss_rate = a.loss;
  system::validate_system_spec(s);
  return s;
}

// The inputs are one stream of x <- x * kMul + kAdd (mod 2^64) from x = seed + 1, `words` draws
// per processor in processor order.
constexpr uint64_t kMul = 6364136223846793005ull, kAdd = 1442695040888963407ull;

// x after `steps` draws of the stream, in O(log steps) (the affine map's powers by squaring).
uint64_t skip_draws(uint64_t x, uint64_t steps) {
  uint64_t mul = kMul, add = kAdd, acc_mul = 1, acc_add = 0;
  for (; steps > 0; steps >>= 1) {
    if (steps & 1) {
      acc_mul *= mul;
      acc_add = acc_add * mul + add;
    }
    add *= mul + 1;
    mul *= mul;
  }
  return x * acc_mul + acc_add;
}

// Writes every local processor's input vector (seeded from `seed`) into its vector memory; returns
// every processor's input when `all` (the host reference needs them), else none: a rank then draws
// and holds its own processors' inputs only.
std::vector<std::vector<uint32_t>> write_inputs(system::System& machine, int n, uint32_t words,
                                                uint64_t seed, bool all) {
  std::vector<std::vector<uint32_t>> inputs;
  for (int p = 0; p < n; ++p) {
    if (!all && !machine.is_local(p)) continue;
    uint64_t x = skip_draws(seed + 1, static_cast<uint64_t>(p) * words);
    std::vector<uint32_t> v(words);
    for (auto& w : v) {
      x = x * kMul + kAdd;
      w = std::bit_cast<uint32_t>(
          static_cast<float>(static_cast<double>(x >> 40) / (1 << 24) - 0.5));
    }
    if (machine.is_local(p))
      std::copy(v.begin(), v.end(), machine.core(p).host_state().vmem.data());
    if (all) inputs.push_back(std::move(v));
  }
  return inputs;
}

// Throws CollectiveError (on every rank) naming the first processor whose vector differs from the
// host reference.
void check_results(const system::System& machine, const compiler::CollectiveSpec& spec,
                   const std::vector<std::vector<uint32_t>>& inputs) {
  const std::vector<uint32_t> want = compiler::collective_reference(spec, inputs);
  const int n = spec.processors;
  int64_t wrong = n;  // the first processor whose vector differs, over every rank
  for (int p = n - 1; p >= 0; --p)
    if (machine.is_local(p) &&
        !std::equal(want.begin(), want.end(), machine.core(p).state().vmem.data()))
      wrong = p;
  wrong = system::allreduce_min(machine.communicator(), wrong);
  if (wrong < n)
    throw system::CollectiveError(
        "bench allreduce",
        fmt::format("processor {}'s result differs from the host reference", wrong));
}

void bench_allreduce(const AllReduceArgs& a) {
  const uint64_t bytes = a.exchange.bytes;
  check_exchange_bytes(bytes);
  const system::SystemSpec sys = allreduce_system(a);
  const int n = sys.processors();
  const int directions = a.exchange.directions;
  compiler::CollectiveSpec spec;
  spec.processors = n;
  spec.words = static_cast<uint32_t>(bytes / 4);
  spec.rings = a.rings;
  spec.directions = directions;
  spec.split_phase = a.split_phase;
  spec.algorithm = compiler::algorithm_from_name(a.algorithm, "--algorithm");
  if (spec.algorithm == compiler::CollectiveAlgorithm::kTorus)
    spec.grid = system::collective_grid(sys);
  core::CoreSpec cs;
  cs.vmem_bytes = std::max<int64_t>(cs.vmem_bytes, static_cast<int64_t>(bytes) + 4 * cs.lanes);
  cs.vmem_bytes = (cs.vmem_bytes + 4 * cs.lanes - 1) / (4 * cs.lanes) * (4 * cs.lanes);
  system::SystemOptions opt;
  opt.seed = a.seed;
  opt.timing_only = !a.check && !a.values;
  opt.comm = &system::world();  // spread over the ranks of `mpirun -n R`
  opt.threads = a.threads;
  system::System machine(cs, sys, compiler::collective_program(spec), opt);
  std::vector<std::vector<uint32_t>> inputs;
  if (a.check || a.values) inputs = write_inputs(machine, n, spec.words, a.seed, a.check);
  machine.record_supersteps();
  const Timing host = time_once([&] { machine.run(); });
  if (a.check) check_results(machine, spec, inputs);
  const double B = sys.link_gbytes_per_s * 1e9;
  const double steps = 2.0 * (n - 1);
  const double bound = n == 1 ? 0.0
                              : steps / n * static_cast<double>(bytes) / (directions * B) +
                                    steps * sys.link_latency_ns * 1e-9;
  const fabric::FabricStats& fs = machine.fabric(0).stats();
  uint64_t retrans = 0;
  for (const auto& l : fs.links) retrans += l.retransmissions;
  nlohmann::ordered_json j;
  j["chips"] = a.exchange.chips;
  j["cores_per_chip"] = a.cores_per_chip;
  j["processors"] = n;
  j["bytes"] = bytes;
  j["topology"] = a.exchange.topology;
  j["rings"] = a.rings;
  j["directions"] = directions;
  j["split_phase"] = a.split_phase;
  j["algorithm"] = a.algorithm;
  if (!spec.grid.empty()) j["grid"] = spec.grid;
  j["link_gbytes_per_s"] = sys.link_gbytes_per_s;
  j["link_latency_ns"] = sys.link_latency_ns;
  j["loss_rate"] = sys.loss_rate;
  j["sim_seconds"] = machine.seconds();
  j["bound_seconds"] = bound;
  j["efficiency"] = machine.seconds() > 0 ? bound / machine.seconds() : 0.0;
  j["host_seconds"] = host.cpu;
  j["host_wall_seconds"] = host.wall;
  j["mpi_ranks"] = machine.communicator().size();
  j["supersteps"] = machine.groups().front().supersteps;
  j["exchange_seconds"] = static_cast<double>(machine.groups().front().exchange_ps) * 1e-12;
  j["barrier_seconds"] = static_cast<double>(machine.groups().front().barrier_ps) * 1e-12;
  j["packets"] = fs.packets;
  j["retransmissions"] = retrans;
  j["packets_per_host_second"] = host.cpu > 0 ? static_cast<double>(fs.packets) / host.cpu : 0.0;
  j["values_checked"] = a.check;
  j["superstep_spans"] = superstep_spans_json(machine.superstep_spans());
  j["host"] = machine.host_json();  // collective
  const nlohmann::ordered_json tagged = report::tagged("allreduce", j);
  print_report(a.json ? tagged : j, {.json = a.json, .json_indent = 2, .key_width = 24});
  if (a.html.empty() || machine.communicator().rank() != 0) return;  // one page, by rank 0
  OutputFile html(a.html, "HTML report");
  htmlreport::write_report({a.html, "bench allreduce", htmlreport::Kind::kAllreduce, tagged}, html);
}

}  // namespace

void setup_allreduce(CLI::App& cmd) {
  auto args = std::make_shared<AllReduceArgs>();
  add_exchange_flags(cmd, args->exchange);
  cmd.add_option("--cores-per-chip", args->cores_per_chip, "participating cores per chip")
      ->capture_default_str();
  cmd.add_option("--rings", args->rings, "virtual rings per direction")->capture_default_str();
  cmd.add_option("--link-bandwidth", args->link_bandwidth,
                 "GB/s per link direction (default: system default)");
  cmd.add_option("--link-latency", args->link_latency, "ns (default: system default)");
  cmd.add_option("--loss", args->loss, "physical packet loss rate")->capture_default_str();
  cli::add_seed_flag(cmd, args->seed, "packet loss and the inputs");
  cmd.add_flag("--check", args->check, "move the values and compare with the host reference");
  cmd.add_flag("--values", args->values,
               "move the values without the host reference (each rank holds its own inputs)");
  cli::add_json_flag(cmd, args->json);
  cli::add_html_flag(cmd, args->html);
  cmd.add_option("--algorithm", args->algorithm, "ring or torus (torus-dimension: cores x X x Y)")
      ->capture_default_str();
  cli::add_threads_flag(cmd, args->threads);
  cmd.add_flag("--split-phase", args->split_phase,
               "ring steps end in xsync/xwait (index updates overlap the exchange)");
  cmd.callback([args] { bench_allreduce(*args); });
}

}  // namespace tessera::bench
