#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/bench/benches.h"
#include "cli/bench/harness.h"
#include "cli/common_flags.h"
#include "common/error.h"
#include "compiler/collectives.h"
#include "compiler/compiler.h"
#include "compiler/data_parallel.h"
#include "graph/model.h"
#include "isa/image.h"
#include "isa/shared_image.h"

namespace tessera::bench {

namespace {

std::vector<int> parse_counts(const std::string& list) {
  std::vector<int> out = cli::positive_integer_list(list, "--procs", "processor count");
  if (out.empty()) throw UsageError("--procs", "empty list");
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
    throw UsageError("--program", fmt::format("'{}': expected allreduce or mlp", a.program));
  if (a.shard < 1) throw UsageError("--shard", fmt::format("{}: need at least 1 sample", a.shard));
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

// One row's timed bodies: its processor count and the per-processor buffers the loader fills.
struct CompileRow {
  int n = 1;
  std::vector<std::vector<uint8_t>>
      copies;               // the separate-copies model's (made once, then only patched)
  isa::SharedImage shared;  // the one-image mode's loaded image (its index store is reused)
  std::vector<std::vector<uint8_t>>
      scratch;  // the other modes' (the per-processor images differ in size)
  Contender one, separate, one_copy, each;
  std::vector<double> patch;  // per round: the index-store write's share of `one`
};

// Sets up row r's timed bodies for `rounds` repetitions; `check` sums a word of every result.
void set_bodies(CompileRow& r, const CompileWorkload& w, int rounds, int each_rounds,
                uint64_t& check) {
  r.copies.resize(static_cast<size_t>(r.n));
  r.scratch.resize(static_cast<size_t>(r.n));
  r.patch.resize(static_cast<size_t>(rounds));
  // One image, loaded once with a contiguous index store (isa/shared_image.h).
  r.one.run = [&w, &check, &r](int round) {
    r.shared.set_image(isa::write_image(w.one(r.n)));
    const double patch = time_once([&] { r.shared.load(r.n); }).cpu;
    if (round >= 0) r.patch[static_cast<size_t>(round)] = patch;
    check += r.shared.index_store().back();
  };
  // One image + patching each processor's separately allocated copy (made beforehand).
  r.separate.run = [&w, &check, &r](int) {
    const std::vector<uint8_t> image = isa::write_image(w.one(r.n));
    for (auto& c : r.copies)
      if (c.size() != image.size()) c = image;
    for (int p = 0; p < r.n; ++p)
      isa::patch_index(r.copies[static_cast<size_t>(p)], static_cast<uint32_t>(p));
    check += r.copies.back()[isa::kImageIndexOffset];
  };
  r.one_copy.run = [&w, &check, &r](int) {
    const std::vector<uint8_t> image = isa::write_image(w.one(r.n));
    for (int p = 0; p < r.n; ++p) {
      r.scratch[static_cast<size_t>(p)] = image;
      isa::patch_index(r.scratch[static_cast<size_t>(p)], static_cast<uint32_t>(p));
    }
    check += r.scratch.back()[isa::kImageIndexOffset];
  };
  r.each.run = [&w, &check, &r](int) {
    for (int p = 0; p < r.n; ++p)
      r.scratch[static_cast<size_t>(p)] = isa::write_image(w.specialised(r.n, p));
    check += r.scratch.back()[isa::kImageIndexOffset];
  };
  r.one.warm_up = r.separate.warm_up = true;  // every row's buffers exist, caches are warm
  r.each.rounds = each_rounds;
}

// Throws Error unless every processor's local program carries its index, in every mode.
void check_indices(CompileRow& r) {
  r.each.run(-1);
  for (int p = 0; p < r.n; ++p) {
    bool ok = r.shared.local_program(p).index == static_cast<uint32_t>(p);
    for (const auto* bufs : {&r.copies, &r.scratch})
      ok = ok && isa::read_image((*bufs)[static_cast<size_t>(p)]).index == static_cast<uint32_t>(p);
    if (!ok)
      throw Error("bench compile", fmt::format("processor {}'s image carries another index", p));
  }
}

nlohmann::ordered_json rows_json(const std::vector<CompileRow>& rows, const CompileWorkload& w) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  const double first = median(rows.front().one.seconds);
  for (const CompileRow& r : rows) {
    const double o = median(r.one.seconds), e = median(r.each.seconds);
    out.push_back({{"processors", r.n},
                   {"bundles", w.one(r.n).code.size()},
                   {"one_image_seconds", o},
                   {"one_image_patch_seconds", median(r.patch)},
                   {"one_image_separate_seconds", median(r.separate.seconds)},
                   {"one_image_copy_seconds", median(r.one_copy.seconds)},
                   {"per_processor_seconds", e},
                   {"one_image_ratio", o / first},
                   {"per_processor_ratio", e / first}});
  }
  return out;
}

void print_table(const nlohmann::ordered_json& rows) {
  std::printf("%10s %8s %14s %14s %14s %10s\n", "processors", "bundles", "one_image_s",
              "one+copies_s", "per_proc_s", "one_ratio");
  for (const auto& r : rows)
    std::printf("%10d %8zu %14.6f %14.6f %14.6f %10.3f\n", r["processors"].get<int>(),
                r["bundles"].get<size_t>(), r["one_image_seconds"].get<double>(),
                r["one_image_copy_seconds"].get<double>(), r["per_processor_seconds"].get<double>(),
                r["one_image_ratio"].get<double>());
}

void bench_compile(const CompileArgs& a) {
  if (a.reps < 1) throw UsageError("bench compile", "--reps must be positive");
  if (a.per_processor_reps < 0)
    throw UsageError("bench compile", "--per-processor-reps must not be negative");
  const CompileWorkload w = compile_workload(a);
  const std::vector<int> counts = parse_counts(a.procs);
  std::vector<CompileRow> rows(counts.size());
  const int each_reps = a.per_processor_reps > 0 ? std::min(a.per_processor_reps, a.reps) : a.reps;
  uint64_t check = 0;
  std::vector<Contender*> contenders;  // every row's, in order: rows interleaved round-robin
  for (size_t i = 0; i < rows.size(); ++i) {
    CompileRow& r = rows[i];
    r.n = counts[i];
    set_bodies(r, w, a.reps, each_reps, check);
    contenders.insert(contenders.end(), {&r.one, &r.separate, &r.one_copy, &r.each});
  }
  interleave(a.reps, contenders);
  for (CompileRow& r : rows) check_indices(r);
  (void)check;
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
  j["rows"] = rows_json(rows, w);
  if (a.json)
    std::printf("%s\n", j.dump(2).c_str());
  else
    print_table(j["rows"]);
}

}  // namespace

void setup_compile(CLI::App& cmd) {
  auto args = std::make_shared<CompileArgs>();
  cmd.add_option("--procs", args->procs, "comma-separated processor counts")->capture_default_str();
  cmd.add_option("--program", args->program,
                 "allreduce (the collective alone) or mlp (its data-parallel training image)")
      ->capture_default_str();
  cmd.add_option("--words", args->words, "allreduce: vector length in fp32 words")
      ->capture_default_str();
  cmd.add_option("--shard", args->shard, "mlp: samples per processor")->capture_default_str();
  add_reps_flag(cmd, args->reps, "rows interleaved; the median CPU time counts");
  cmd.add_option("--per-processor-reps", args->per_processor_reps,
                 "repetitions of the per-processor mode (0: --reps; n compiles each)")
      ->capture_default_str();
  cli::add_json_flag(cmd, args->json);
  cmd.callback([args] { bench_compile(*args); });
}

}  // namespace tessera::bench
