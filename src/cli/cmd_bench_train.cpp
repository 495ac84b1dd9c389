// `tessera bench train [--model mlp] [--batch 128] [--steps N] [--config C] [--seed S] [--json]`:
// host seconds per training step of the simulated chip (runtime::ChipTrainer: the compiled step on
// the timed core) vs the host reference executor's fp32 step (graph::HostTrainer, matmuls through
// OpenBLAS on one thread), in the same process, on the same batches, same model, same optimizer
// (Adam, lr 1e-3) and same initial parameters.
//
// Batches are synthetic and seeded (pixels uniform in [0, 1), labels uniform over the classes): the
// cost of a step does not depend on the values, and the benchmark needs no dataset. One untimed
// warm-up step per side (compiling the program / building the graph), then `steps` timed steps,
// chip and reference interleaved step by step so that load on a shared host hits both alike. Each
// step is timed in CPU seconds of the calling thread (both sides are single-threaded on it).
//   sim_step_seconds   mean over the timed steps of ChipTrainer::step (host link write + Core::run)
//   ref_step_seconds   mean over the timed steps of HostTrainer::step (fp32)
//   ratio              sim_step_seconds / ref_step_seconds   (issue 3's target: <= 3)
//   ratio_best         fastest chip step / fastest reference step
// Simulated figures of the last timed step (every full-batch step runs the same program):
//   cycles_per_step, bundles_per_step, mxu_utilization and vector_utilization (busy cycles of the
//   unit during the step / cycles of the step), sim_bundles_per_second (bundles of the timed steps
//   / their host CPU seconds).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/bench_clock.h"
#include "cli/commands.h"
#include "common/config.h"
#include "common/error.h"
#include "core/spec.h"
#include "graph/host_trainer.h"
#include "graph/model.h"
#include "runtime/train_chip.h"
#include "system/machine_spec.h"

extern "C" void openblas_set_num_threads(int num_threads);

namespace tessera::cli {

namespace {

struct BenchTrainArgs {
  std::string model = "mlp", config;
  int batch = 128;
  int steps = 20;
  uint64_t seed = 0;
  bool json = false;
};

template <typename F>
double timed(F&& body) {
  const double c0 = thread_cpu_seconds();
  body();
  return thread_cpu_seconds() - c0;
}

// `count` batches of `batch` samples: pixels uniform in [0, 1), labels uniform in [0, classes).
struct Batches {
  std::vector<std::vector<float>> images;
  std::vector<std::vector<int32_t>> labels;
};

Batches make_batches(int count, int batch, int64_t sample, int64_t classes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  std::uniform_int_distribution<int32_t> label(0, static_cast<int32_t>(classes - 1));
  Batches b;
  for (int i = 0; i < count; ++i) {
    std::vector<float> x(static_cast<size_t>(batch * sample));
    for (float& v : x) v = pixel(rng);
    std::vector<int32_t> y(static_cast<size_t>(batch));
    for (int32_t& v : y) v = label(rng);
    b.images.push_back(std::move(x));
    b.labels.push_back(std::move(y));
  }
  return b;
}

struct CoreCounters {
  int64_t cycles = 0, bundles = 0, mxu = 0, vec = 0;
};

CoreCounters counters(const core::Core& c) {
  return {c.cycles(), c.bundles(), c.unit_busy_cycles(isa::Unit::Mxu),
          c.unit_busy_cycles(isa::Unit::Vector)};
}

void bench_train(const BenchTrainArgs& a) {
  if (a.batch < 1) throw Error("bench train", "--batch must be >= 1");
  if (a.steps < 1) throw Error("bench train", "--steps must be >= 1");
  const graph::ModelSpec model = graph::zoo_spec(a.model);
  const core::CoreSpec spec = system::load_machine_spec(a.config).core;
  openblas_set_num_threads(1);

  runtime::ChipTrainerOptions o;
  o.batch = a.batch;
  o.seed = a.seed;
  runtime::ChipTrainer chip(model, spec, o);
  graph::HostTrainer ref(model, a.batch, graph::Numerics::kF32, o.optimizer, a.seed);
  const int64_t sample = ref.sample_size();
  const int64_t classes = model.classes;
  const Batches data = make_batches(a.steps + 1, a.batch, sample, classes, a.seed);

  chip.step(data.images[0].data(), data.labels[0].data(), a.batch);
  ref.step(data.images[0].data(), data.labels[0].data(), a.batch);
  double sim_total = 0, ref_total = 0, sim_best = 1e300, ref_best = 1e300;
  CoreCounters before{}, after{};
  const CoreCounters first = counters(chip.core());
  for (int i = 1; i <= a.steps; ++i) {
    const float* x = data.images[static_cast<size_t>(i)].data();
    const int32_t* y = data.labels[static_cast<size_t>(i)].data();
    before = counters(chip.core());
    const double s = timed([&] { chip.step(x, y, a.batch); });
    after = counters(chip.core());
    const double r = timed([&] { ref.step(x, y, a.batch); });
    sim_total += s, ref_total += r;
    sim_best = std::min(sim_best, s), ref_best = std::min(ref_best, r);
  }
  const double sim_mean = sim_total / a.steps, ref_mean = ref_total / a.steps;
  const double cycles = static_cast<double>(after.cycles - before.cycles);

  nlohmann::ordered_json j;
  j["benchmark"] = "train";
  j["model"] = a.model;
  j["batch"] = a.batch;
  j["steps"] = a.steps;
  j["optimizer"] = "adam";
  j["config"] = spec.name;
  j["sim_step_seconds"] = sim_mean;
  j["ref_step_seconds"] = ref_mean;
  j["ratio"] = sim_mean / ref_mean;
  j["ratio_best"] = sim_best / ref_best;
  j["cycles_per_step"] = after.cycles - before.cycles;
  j["bundles_per_step"] = after.bundles - before.bundles;
  j["mxu_utilization"] = static_cast<double>(after.mxu - before.mxu) / cycles;
  j["vector_utilization"] = static_cast<double>(after.vec - before.vec) / cycles;
  j["sim_bundles_per_second"] = static_cast<double>(after.bundles - first.bundles) / sim_total;
  j["reference"] = "graph::HostTrainer fp32, OpenBLAS 1 thread";
  if (a.json) {
    std::printf("%s\n", j.dump().c_str());
    return;
  }
  for (const auto& [key, value] : j.items())
    std::printf("%-24s %s\n", key.c_str(), value.dump().c_str());
}

}  // namespace

void register_bench_train_command(CLI::App& app) {
  auto* bench = app.get_subcommand("bench");
  auto args = std::make_shared<BenchTrainArgs>();
  auto* t = bench->add_subcommand(
      "train", "host seconds per training step: simulated chip vs fp32 host reference");
  t->add_option("--model", args->model, "zoo model")->capture_default_str();
  t->add_option("--batch", args->batch, "samples per step")->capture_default_str();
  t->add_option("--steps", args->steps, "timed steps (after one warm-up step)")
      ->capture_default_str();
  t->add_option("--config", args->config, "core config file (default: built-in defaults)");
  t->add_option("--seed", args->seed, "parameter initialisation and batch seed")
      ->capture_default_str();
  t->add_flag("--json", args->json, "print one JSON object");
  t->callback([args] { bench_train(*args); });
}

}  // namespace tessera::cli
