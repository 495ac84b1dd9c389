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
// step is timed in CPU seconds of the calling thread (both sides are single-threaded on it;
// cli/bench/harness.h).
//   sim_step_seconds   mean over the timed steps of ChipTrainer::step (host link write + Core::run)
//   ref_step_seconds   mean over the timed steps of HostTrainer::step (fp32)
//   ratio              sim_step_seconds / ref_step_seconds   (target: <= 3)
//   ratio_best         fastest chip step / fastest reference step
// Simulated figures of the last timed step (every full-batch step runs the same program):
//   cycles_per_step, bundles_per_step, mxu_utilization and vector_utilization (busy cycles of the
//   unit during the step / cycles of the step, over core.mxu.count MXUs for the MXU),
//   sim_bundles_per_second (bundles of the timed steps
//   / their host CPU seconds).
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/bench/benches.h"
#include "cli/bench/harness.h"
#include "cli/common_flags.h"
#include "common/error.h"
#include "core/spec.h"
#include "graph/host_trainer.h"
#include "graph/model.h"
#include "runtime/train_chip.h"
#include "system/machine_spec.h"

extern "C" void openblas_set_num_threads(int num_threads);

namespace tessera::bench {

namespace {

struct BenchTrainArgs {
  std::string model = "mlp", config;
  int batch = 128;
  int steps = 20;
  uint64_t seed = 0;
  bool json = false;
};

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
  if (a.batch < 1) throw UsageError("bench train", "--batch must be >= 1");
  if (a.steps < 1) throw UsageError("bench train", "--steps must be >= 1");
  const graph::ModelSpec model = cli::model_from_flag(a.model);
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

  // Round r steps on batch r + 1 (the warm-up, round -1, on batch 0). The chip's counters are
  // read (untimed) before its step and after it, i.e. before the reference's step.
  const auto batch = [&](int round) { return static_cast<size_t>(round + 1); };
  CoreCounters first{}, before{}, after{};
  Contender sim_steps, ref_steps;
  sim_steps.setup = [&](int round) {
    before = counters(chip.core());
    if (round == 0) first = before;
  };
  sim_steps.run = [&](int round) {
    chip.step(data.images[batch(round)].data(), data.labels[batch(round)].data(), a.batch);
  };
  ref_steps.setup = [&](int) { after = counters(chip.core()); };
  ref_steps.run = [&](int round) {
    ref.step(data.images[batch(round)].data(), data.labels[batch(round)].data(), a.batch);
  };
  sim_steps.warm_up = ref_steps.warm_up = true;
  interleave(a.steps, {&sim_steps, &ref_steps});
  const double sim_total = sum(sim_steps.seconds);
  const double sim_mean = mean(sim_steps.seconds), ref_mean = mean(ref_steps.seconds);
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
  j["ratio_best"] = minimum(sim_steps.seconds) / minimum(ref_steps.seconds);
  j["cycles_per_step"] = after.cycles - before.cycles;
  j["bundles_per_step"] = after.bundles - before.bundles;
  j["mxu_utilization"] = static_cast<double>(after.mxu - before.mxu) / (cycles * spec.mxu_count);
  j["vector_utilization"] = static_cast<double>(after.vec - before.vec) / cycles;
  j["sim_bundles_per_second"] = static_cast<double>(after.bundles - first.bundles) / sim_total;
  j["reference"] = "graph::HostTrainer fp32, OpenBLAS 1 thread";
  print_report(j, {.json = a.json, .key_width = 24});
}

}  // namespace

void setup_train(CLI::App& cmd) {
  auto args = std::make_shared<BenchTrainArgs>();
  cmd.add_option("--model", args->model, "zoo model")->capture_default_str();
  cmd.add_option("--batch", args->batch, "samples per step")->capture_default_str();
  cmd.add_option("--steps", args->steps, "timed steps (after one warm-up step)")
      ->capture_default_str();
  cli::add_config_flag(cmd, args->config);
  cli::add_seed_flag(cmd, args->seed, "parameter initialisation and the batches");
  cli::add_json_flag(cmd, args->json);
  cmd.callback([args] { bench_train(*args); });
}

}  // namespace tessera::bench
