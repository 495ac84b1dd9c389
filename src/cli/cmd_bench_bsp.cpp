// `tessera bench compile` and `tessera bench allreduce` (issue 4).
//
// bench compile --procs 1,16,256,1024 [--program allreduce|mlp] [--words W] [--shard S] [--reps R]
//   [--per-processor-reps K] [--json]: compile time for each processor count of
//   allreduce  the ring all-reduce (compiler/collectives.h, 2 rings x 2 directions over W words;
//              a compile takes about 100 us), or
//   mlp        the whole data-parallel training image of mlp (compiler/data_parallel.h: the step
//              compiled for S samples per processor, SGD, with the gradient all-reduce spliced in).
//   Each row's figure is the MEDIAN CPU time over R repetitions (default 50); the rows are
//   interleaved round-robin (repetition r times every row before repetition r + 1), so slow
//   phases of a shared machine hit every row alike; one untimed warm-up of every row first.
//   one_image_seconds        generate + assemble + encode ONE image, then load it for n processors
//                            as the loader model of isa/shared_image.h does (S1110-S1130): the
//                            image's bytes once, shared, and each processor's index written into
//                            its index store, all n stores one contiguous array
//   one_image_patch_seconds  the index-store part of it alone (a contiguous write of n words)
//   one_image_separate_seconds  the previous loader model, for comparison: the same compile, then
//                            patch the index word of n separately allocated copies of the image
//                            (made beforehand; one cache and TLB miss each, about 50 ns)
//   one_image_copy_seconds   the same including making the n copies of the image bytes
//   per_processor_seconds    generate + assemble + encode one specialised program per processor
//                            (median of the first K repetitions; default K = R)
//   one_image_ratio          one_image_seconds / its value at the first --procs entry
// bench allreduce --chips N --bytes S --topology line|ring|torus2d [--rings K] [--directions 1|2]
//   [--link-bandwidth GBps] [--link-latency ns] [--cores-per-chip C] [--loss R] [--seed X]
//   [--check] [--split-phase] [--json]: the generated all-reduce of S bytes (fp32 words) over every
//   core of every chip on the timed system (system/system.h) with its packet fabric. sim_seconds
//   simulated time until every processor halted bound_seconds   2(n-1)/n * S / (d * B) + 2(n-1) *
//   link latency: the bandwidth-optimal ring
//                   all-reduce over n processors with d directions (each carrying S/d), B = link
//                   bandwidth, one link latency per step
//   efficiency      bound_seconds / sim_seconds
//   host_seconds    host CPU seconds of System::run (rank 0's under mpirun; host_wall_seconds:
//   wall) mpi_ranks       processes the processors are spread over (`mpirun -n R`; system/system.h)
// Without --check the exchange runs timing-only (sizes, not values: identical times, no memory for
// N copies of S); --check moves the values and compares every processor's vector with the host
// reference bit for bit. Defaults: directions 2 (every shipped topology has backward links), 1
// ring per direction, barrier placement and the rest from system.* defaults (system_spec.h).
// --split-phase: ring steps end in xsync / xwait (compiler/collectives.h split_phase); JSON
// split_phase.
// --algorithm ring|torus (default ring): torus = the torus-dimension all-reduce over the machine's
// grid (system/collective_grid.h: cores per chip x dims_x x dims_y, or cores per chip x chips), 2
// sum (d_i - 1) supersteps; JSON algorithm, grid. bound_seconds keeps the ring formula above for
// both (so efficiency compares them against the same figure), with the latency term 2(n-1) link
// latencies.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/bench_clock.h"
#include "cli/commands.h"
#include "common/error.h"
#include "compiler/collectives.h"
#include "compiler/compiler.h"
#include "compiler/data_parallel.h"
#include "graph/model.h"
#include "isa/image.h"
#include "isa/shared_image.h"
#include "system/collective_grid.h"
#include "system/system.h"

namespace tessera::cli {

namespace {

std::vector<int> parse_counts(const std::string& list) {
  std::vector<int> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      const int v = std::stoi(item, &used);
      if (used != item.size() || v < 1) throw std::invalid_argument(item);
      out.push_back(v);
    } catch (const std::exception&) {
      throw Error("--procs", fmt::format("'{}' is not a positive processor count", item));
    }
  }
  if (out.empty()) throw Error("--procs", "empty list");
  return out;
}

struct CompileArgs {
  std::string procs = "1,16,256,1024";
  std::string program = "allreduce";
  uint32_t words = 1 << 20;
  int shard = 16;
  int reps = 50;
  int per_processor_reps = 0;  // 0: --reps
  bool json = false;
};

// What is compiled: the one image for n processors, and processor p's specialised program.
struct CompileWorkload {
  std::string name;
  std::function<isa::Program(int n)> one;
  std::function<isa::Program(int n, int p)> specialised;
};

compiler::CollectiveSpec allreduce_spec(int processors, uint32_t words) {
  compiler::CollectiveSpec spec;
  spec.processors = processors;
  spec.words = words;
  spec.rings = 2;
  spec.directions = 2;
  return spec;
}

CompileWorkload compile_workload(const CompileArgs& a) {
  if (a.program == "allreduce")
    return {fmt::format("all-reduce of {} words, 2 rings x 2 directions", a.words),
            [w = a.words](int n) { return compiler::collective_program(allreduce_spec(n, w)); },
            [w = a.words](int n, int p) {
              return compiler::collective_program_for(allreduce_spec(n, w), p);
            }};
  if (a.program != "mlp")
    throw Error("--program", fmt::format("'{}': expected allreduce or mlp", a.program));
  if (a.shard < 1) throw Error("--shard", fmt::format("{}: need at least 1 sample", a.shard));
  // The data-parallel training image of mlp (compiler/data_parallel.h): the step compiled for the
  // shard (SGD, persistent gradients) with the gradient all-reduce over n processors spliced in.
  auto image = [shard = a.shard](int n, int p) {
    const core::CoreSpec spec;
    compiler::CompileOptions o;
    o.batch = shard;
    o.persistent_grads = true;
    const compiler::CompiledProgram step = compiler::compile(graph::zoo_spec("mlp"), spec, o);
    compiler::AllReduceOptions ar;
    ar.processors = n;
    ar.shard = shard;
    ar.global_batch = shard * n;
    ar.rings = 2;
    ar.directions = 2;
    ar.processor = p;
    return compiler::data_parallel_step(step, spec, ar).program;
  };
  return {fmt::format("data-parallel training step of mlp, {} samples per processor", a.shard),
          [image](int n) { return image(n, -1); }, image};
}

double cpu_seconds_of(const std::function<void()>& body) {
  const double c0 = thread_cpu_seconds();
  body();
  return thread_cpu_seconds() - c0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// One row's timed bodies: its processor count and the per-processor buffers the loader fills.
struct CompileRow {
  int n = 1;
  std::vector<std::vector<uint8_t>>
      copies;               // the separate-copies model's (made once, then only patched)
  isa::SharedImage shared;  // the one-image mode's loaded image (its index store is reused)
  std::vector<std::vector<uint8_t>>
      scratch;  // the other modes' (the per-processor images differ in size)
  std::vector<double> one, separate, one_copy, each, patch;
  double patch_last = 0;  // the index-store write's share of the last one-image repetition
};

void bench_compile(const CompileArgs& a) {
  if (a.reps < 1) throw Error("bench compile", "--reps must be positive");
  if (a.per_processor_reps < 0)
    throw Error("bench compile", "--per-processor-reps must not be negative");
  const CompileWorkload w = compile_workload(a);
  std::vector<CompileRow> rows;
  for (int n : parse_counts(a.procs)) {
    rows.emplace_back();
    rows.back().n = n;
    rows.back().copies.resize(static_cast<size_t>(n));
    rows.back().scratch.resize(static_cast<size_t>(n));
  }
  uint64_t check = 0;
  // One image, loaded once with a contiguous index store (isa/shared_image.h).
  auto one = [&](CompileRow& r) {
    r.shared.set_image(isa::write_image(w.one(r.n)));
    const double c0 = thread_cpu_seconds();
    r.shared.load(r.n);
    r.patch_last = thread_cpu_seconds() - c0;
    check += r.shared.index_store().back();
  };
  // One image + patching each processor's separately allocated copy (made beforehand).
  auto separate = [&](CompileRow& r) {
    const std::vector<uint8_t> image = isa::write_image(w.one(r.n));
    for (auto& c : r.copies)
      if (c.size() != image.size()) c = image;
    for (int p = 0; p < r.n; ++p)
      isa::patch_index(r.copies[static_cast<size_t>(p)], static_cast<uint32_t>(p));
    check += r.copies.back()[isa::kImageIndexOffset];
  };
  auto one_copy = [&](CompileRow& r) {
    const std::vector<uint8_t> image = isa::write_image(w.one(r.n));
    for (int p = 0; p < r.n; ++p) {
      r.scratch[static_cast<size_t>(p)] = image;
      isa::patch_index(r.scratch[static_cast<size_t>(p)], static_cast<uint32_t>(p));
    }
    check += r.scratch.back()[isa::kImageIndexOffset];
  };
  auto each = [&](CompileRow& r) {
    for (int p = 0; p < r.n; ++p)
      r.scratch[static_cast<size_t>(p)] = isa::write_image(w.specialised(r.n, p));
    check += r.scratch.back()[isa::kImageIndexOffset];
  };
  for (CompileRow& r : rows) {  // warm-up: every row's buffers exist, caches are warm
    one(r);
    separate(r);
  }
  const int each_reps = a.per_processor_reps > 0 ? std::min(a.per_processor_reps, a.reps) : a.reps;
  for (int rep = 0; rep < a.reps; ++rep)  // round-robin: every row sees the same machine conditions
    for (CompileRow& r : rows) {
      r.one.push_back(cpu_seconds_of([&] { one(r); }));
      r.patch.push_back(r.patch_last);
      r.separate.push_back(cpu_seconds_of([&] { separate(r); }));
      r.one_copy.push_back(cpu_seconds_of([&] { one_copy(r); }));
      if (rep < each_reps) r.each.push_back(cpu_seconds_of([&] { each(r); }));
    }
  for (CompileRow& r : rows) {  // every processor's local program carries its index, in every mode
    each(r);
    for (int p = 0; p < r.n; ++p) {
      bool ok = r.shared.local_program(p).index == static_cast<uint32_t>(p);
      for (const auto* bufs : {&r.copies, &r.scratch})
        ok = ok &&
             isa::read_image((*bufs)[static_cast<size_t>(p)]).index == static_cast<uint32_t>(p);
      if (!ok)
        throw Error("bench compile", fmt::format("processor {}'s image carries another index", p));
    }
  }
  (void)check;
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  const double first = median(rows.front().one);
  for (const CompileRow& r : rows) {
    const double o = median(r.one), e = median(r.each);
    out.push_back({{"processors", r.n},
                   {"bundles", w.one(r.n).code.size()},
                   {"one_image_seconds", o},
                   {"one_image_patch_seconds", median(r.patch)},
                   {"one_image_separate_seconds", median(r.separate)},
                   {"one_image_copy_seconds", median(r.one_copy)},
                   {"per_processor_seconds", e},
                   {"one_image_ratio", o / first},
                   {"per_processor_ratio", e / first}});
  }
  nlohmann::ordered_json j;
  j["program"] = a.program;
  j["workload"] = w.name;
  if (a.program == "allreduce")
    j["words"] = a.words;
  else
    j["shard"] = a.shard;
  j["reps"] = a.reps;
  j["per_processor_reps"] = each_reps;
  j["statistic"] = "median CPU seconds over the repetitions; rows interleaved round-robin";
  j["rows"] = out;
  if (a.json) {
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf("%10s %8s %14s %14s %14s %10s\n", "processors", "bundles", "one_image_s",
              "one+copies_s", "per_proc_s", "one_ratio");
  for (const auto& r : out)
    std::printf("%10d %8zu %14.6f %14.6f %14.6f %10.3f\n", r["processors"].get<int>(),
                r["bundles"].get<size_t>(), r["one_image_seconds"].get<double>(),
                r["one_image_copy_seconds"].get<double>(), r["per_processor_seconds"].get<double>(),
                r["one_image_ratio"].get<double>());
}

struct AllReduceArgs {
  int chips = 8;
  int cores_per_chip = 1;
  uint64_t bytes = 64ull << 20;
  std::string topology = "ring";
  int rings = 1;
  int directions = 2;
  double link_bandwidth = 0;  // 0: the system default
  double link_latency = -1;   // <0: the system default
  double loss = 0;
  uint64_t seed = 0;
  bool check = false;
  bool json = false;
  bool split_phase = false;
  std::string algorithm = "ring";
};

system::SystemSpec allreduce_system(const AllReduceArgs& a) {
  system::SystemSpec s;
  s.chips = a.chips;
  s.cores_per_chip = a.cores_per_chip;
  s.chips_per_board = a.chips;
  s.boards = 1;
  if (a.topology == "line")
    s.topology = system::Topology::kLine;
  else if (a.topology == "ring")
    s.topology = system::Topology::kRing;
  else if (a.topology == "torus2d") {
    s.topology = system::Topology::kTorus2d;
    int x = static_cast<int>(std::sqrt(static_cast<double>(a.chips)));
    while (x > 1 && a.chips % x != 0) --x;
    s.dims_y = x;
    s.dims_x = a.chips / x;
  } else {
    throw Error("--topology", fmt::format("'{}': expected line, ring or torus2d", a.topology));
  }
  if (a.link_bandwidth > 0) s.link_gbytes_per_s = a.link_bandwidth;
  if (a.link_latency >= 0) s.link_latency_ns = a.link_latency;
  s.loss_rate = a.loss;
  system::validate_system_spec(s);
  return s;
}

void bench_allreduce(const AllReduceArgs& a) {
  if (a.bytes < 4 || a.bytes % 4 != 0)
    throw Error("--bytes", fmt::format("{}: a positive multiple of 4", a.bytes));
  if (a.bytes / 4 > 0x3fffffffull)
    throw Error("--bytes", fmt::format("{}: at most 4 GiB", a.bytes));
  const system::SystemSpec sys = allreduce_system(a);
  const int n = sys.processors();
  compiler::CollectiveSpec spec;
  spec.processors = n;
  spec.words = static_cast<uint32_t>(a.bytes / 4);
  spec.rings = a.rings;
  spec.directions = a.directions;
  spec.split_phase = a.split_phase;
  spec.algorithm = compiler::algorithm_from_name(a.algorithm, "--algorithm");
  if (spec.algorithm == compiler::CollectiveAlgorithm::kTorus)
    spec.grid = system::collective_grid(sys);
  core::CoreSpec cs;
  cs.vmem_bytes = std::max<int64_t>(cs.vmem_bytes, static_cast<int64_t>(a.bytes) + 4 * cs.lanes);
  cs.vmem_bytes = (cs.vmem_bytes + 4 * cs.lanes - 1) / (4 * cs.lanes) * (4 * cs.lanes);
  system::SystemOptions opt;
  opt.seed = a.seed;
  opt.timing_only = !a.check;
  opt.comm = &system::world();  // spread over the ranks of `mpirun -n R`
  system::System machine(cs, sys, compiler::collective_program(spec), opt);
  std::vector<std::vector<uint32_t>> inputs;
  if (a.check) {
    uint64_t x = a.seed + 1;
    for (int p = 0; p < n; ++p) {
      std::vector<uint32_t> v(spec.words);
      for (auto& w : v) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        w = std::bit_cast<uint32_t>(
            static_cast<float>(static_cast<double>(x >> 40) / (1 << 24) - 0.5));
      }
      if (machine.is_local(p))
        std::copy(v.begin(), v.end(), machine.core(p).host_state().vmem.data());
      inputs.push_back(std::move(v));
    }
  }
  const double c0 = thread_cpu_seconds();
  const auto w0 = std::chrono::steady_clock::now();
  machine.run();
  const double host = thread_cpu_seconds() - c0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  if (a.check) {
    const std::vector<uint32_t> want = compiler::collective_reference(spec, inputs);
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
  const double B = sys.link_gbytes_per_s * 1e9;
  const double steps = 2.0 * (n - 1);
  const double bound = n == 1 ? 0.0
                              : steps / n * static_cast<double>(a.bytes) / (a.directions * B) +
                                    steps * sys.link_latency_ns * 1e-9;
  const fabric::FabricStats& fs = machine.fabric(0).stats();
  uint64_t retrans = 0;
  for (const auto& l : fs.links) retrans += l.retransmissions;
  nlohmann::ordered_json j;
  j["chips"] = a.chips;
  j["cores_per_chip"] = a.cores_per_chip;
  j["processors"] = n;
  j["bytes"] = a.bytes;
  j["topology"] = a.topology;
  j["rings"] = a.rings;
  j["directions"] = a.directions;
  j["split_phase"] = a.split_phase;
  j["algorithm"] = a.algorithm;
  if (!spec.grid.empty()) j["grid"] = spec.grid;
  j["link_gbytes_per_s"] = sys.link_gbytes_per_s;
  j["link_latency_ns"] = sys.link_latency_ns;
  j["loss_rate"] = sys.loss_rate;
  j["sim_seconds"] = machine.seconds();
  j["bound_seconds"] = bound;
  j["efficiency"] = machine.seconds() > 0 ? bound / machine.seconds() : 0.0;
  j["host_seconds"] = host;
  j["host_wall_seconds"] = wall;
  j["mpi_ranks"] = machine.communicator().size();
  j["supersteps"] = machine.groups().front().supersteps;
  j["exchange_seconds"] = static_cast<double>(machine.groups().front().exchange_ps) * 1e-12;
  j["barrier_seconds"] = static_cast<double>(machine.groups().front().barrier_ps) * 1e-12;
  j["packets"] = fs.packets;
  j["retransmissions"] = retrans;
  j["packets_per_host_second"] = host > 0 ? static_cast<double>(fs.packets) / host : 0.0;
  j["values_checked"] = a.check;
  if (a.json) {
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  for (const auto& [k, v] : j.items()) std::printf("%-24s %s\n", k.c_str(), v.dump().c_str());
}

}  // namespace

void register_bench_bsp_commands(CLI::App& app) {
  auto* bench = app.get_subcommand("bench");
  auto ca = std::make_shared<CompileArgs>();
  auto* c = bench->add_subcommand(
      "compile",
      "compile time of one all-reduce image (+index patching) vs one image per processor");
  c->add_option("--procs", ca->procs, "comma-separated processor counts")->capture_default_str();
  c->add_option("--program", ca->program,
                "allreduce (the collective alone) or mlp (its data-parallel training image)")
      ->capture_default_str();
  c->add_option("--words", ca->words, "allreduce: vector length in fp32 words")
      ->capture_default_str();
  c->add_option("--shard", ca->shard, "mlp: samples per processor")->capture_default_str();
  c->add_option("--reps", ca->reps, "repetitions, rows interleaved (the median CPU time counts)")
      ->capture_default_str();
  c->add_option("--per-processor-reps", ca->per_processor_reps,
                "repetitions of the per-processor mode (0: --reps; n compiles each)")
      ->capture_default_str();
  c->add_flag("--json", ca->json, "print one JSON object");
  c->callback([ca] { bench_compile(*ca); });

  auto aa = std::make_shared<AllReduceArgs>();
  auto* r = bench->add_subcommand(
      "allreduce", "the generated ring all-reduce on the timed multi-chip system vs its bound");
  r->add_option("--chips", aa->chips, "chips")->capture_default_str();
  r->add_option("--cores-per-chip", aa->cores_per_chip, "participating cores per chip")
      ->capture_default_str();
  r->add_option("--bytes", aa->bytes, "vector size in bytes (fp32 words)")->capture_default_str();
  r->add_option("--topology", aa->topology, "line, ring or torus2d (near-square dims)")
      ->capture_default_str();
  r->add_option("--rings", aa->rings, "virtual rings per direction")->capture_default_str();
  r->add_option("--directions", aa->directions, "1 or 2")->capture_default_str();
  r->add_option("--link-bandwidth", aa->link_bandwidth,
                "GB/s per link direction (default: system default)");
  r->add_option("--link-latency", aa->link_latency, "ns (default: system default)");
  r->add_option("--loss", aa->loss, "physical packet loss rate")->capture_default_str();
  r->add_option("--seed", aa->seed, "loss and input seed")->capture_default_str();
  r->add_flag("--check", aa->check, "move the values and compare with the host reference");
  r->add_flag("--json", aa->json, "print one JSON object");
  r->add_option("--algorithm", aa->algorithm, "ring or torus (torus-dimension: cores x X x Y)")
      ->capture_default_str();
  r->add_flag("--split-phase", aa->split_phase,
              "ring steps end in xsync/xwait (index updates overlap the exchange)");
  r->callback([aa] { bench_allreduce(*aa); });
}

}  // namespace tessera::cli
