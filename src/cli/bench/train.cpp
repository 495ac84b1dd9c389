// `tessera bench train [--model mlp|cnn|gpt] [--batch B] [--steps N] [--config C] [--seed S]
// [--json]`:
// host seconds per training step of the simulated chip (runtime::ChipTrainer: the compiled step on
// the timed core) vs the host reference executor's fp32 step (graph::HostTrainer, matmuls through
// OpenBLAS on one thread), in the same process, on the same batches, same model, same optimizer
// (Adam, lr 1e-3) and same initial parameters.
//
// Batches are synthetic and seeded (pixels uniform in [0, 1), labels uniform over the classes; gpt:
// byte ids and next-byte labels uniform over the 256 bytes): the cost of a step does not depend on
// the values, and the benchmark needs no dataset. gpt is the default recipe's decoder (d 128, 4
// heads, 2 blocks, context 64) with batch 32 unless --batch says otherwise (other models: 128). One
// untimed warm-up step per side (compiling the program / building the graph), then `steps` timed
// steps, chip and reference interleaved step by step so that load on a shared host hits both alike.
// Each step is timed in CPU seconds of the calling thread (both sides are single-threaded on it;
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
#include <optional>
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
#include "runtime/host_run.h"
#include "runtime/train_chip.h"
#include "runtime/trainer.h"
#include "system/machine_spec.h"

extern "C" void openblas_set_num_threads(int num_threads);

namespace tessera::bench {

namespace {

struct BenchTrainArgs {
  std::string model = "mlp", config;
  std::optional<int> batch;  // default 128, gpt 32
  int steps = 20;
  uint64_t seed = 0;
  bool json = false;
};

// `count` batches of `batch` samples: pixels uniform in [0, 1) (text: byte ids uniform in
// [0, 256)), `labels` labels per sample uniform in [0, classes).
std::vector<runtime::Batch> make_batches(int count, int batch, int64_t sample, int64_t labels,
                                         int64_t classes, bool text, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  std::uniform_int_distribution<int32_t> label(0, static_cast<int32_t>(classes - 1));
  std::uniform_int_distribution<int32_t> byte(0, graph::kGptVocabulary - 1);
  std::vector<runtime::Batch> out;
  for (int i = 0; i < count; ++i) {
    runtime::Batch b;
    b.size = batch;
    if (text) {
      b.ids.resize(static_cast<size_t>(batch * sample));
      for (int32_t& v : b.ids) v = byte(rng);
    } else {
      b.images.resize(static_cast<size_t>(batch * sample));
      for (float& v : b.images) v = pixel(rng);
    }
    b.labels.resize(static_cast<size_t>(batch * labels));
    for (int32_t& v : b.labels) v = label(rng);
    out.push_back(std::move(b));
  }
  return out;
}

struct CoreCounters {
  int64_t cycles = 0, bundles = 0, mxu = 0, vec = 0;
};

CoreCounters counters(const core::Core& c) {
  return {c.cycles(), c.bundles(), c.unit_busy_cycles(isa::Unit::Mxu),
          c.unit_busy_cycles(isa::Unit::Vector)};
}

void bench_train(const BenchTrainArgs& a) {
  const bool text = a.model == "gpt";
  const int batch_size = a.batch.value_or(text ? 32 : 128);
  if (batch_size < 1) throw UsageError("bench train", "--batch must be >= 1");
  if (a.steps < 1) throw UsageError("bench train", "--steps must be >= 1");
  const runtime::TrainModel model = text ? runtime::TrainModel(graph::GptSpec{})
                                         : runtime::TrainModel(cli::model_from_flag(a.model));
  const core::CoreSpec spec = system::load_machine_spec(a.config).core;
  openblas_set_num_threads(1);

  runtime::ChipTrainerOptions o;
  o.batch = batch_size;
  o.seed = a.seed;
  runtime::ChipTrainer chip(model, spec, o);
  graph::HostTrainer ref = runtime::host_trainer(model, batch_size, graph::Numerics::kF32,
                                                 o.optimizer, a.seed, /*use_blas=*/true);
  const graph::Model& m = ref.model();
  const int64_t sample = ref.sample_size();
  const int64_t labels = graph::num_elements(m.graph.value(m.labels).shape) / batch_size;
  const int64_t classes = m.graph.value(m.logits).shape.back();
  const std::vector<runtime::Batch> data =
      make_batches(a.steps + 1, batch_size, sample, labels, classes, text, a.seed);

  // Round r steps on batch r + 1 (the warm-up, round -1, on batch 0). The chip's counters are
  // read (untimed) before its step and after it, i.e. before the reference's step.
  const auto batch = [&](int round) { return static_cast<size_t>(round + 1); };
  CoreCounters first{}, before{}, after{};
  Contender sim_steps, ref_steps;
  sim_steps.setup = [&](int round) {
    before = counters(chip.core());
    if (round == 0) first = before;
  };
  sim_steps.run = [&](int round) { runtime::step_on(chip, data[batch(round)]); };
  ref_steps.setup = [&](int) { after = counters(chip.core()); };
  ref_steps.run = [&](int round) { runtime::step_on(ref, data[batch(round)]); };
  sim_steps.warm_up = ref_steps.warm_up = true;
  interleave(a.steps, {&sim_steps, &ref_steps});
  const double sim_total = sum(sim_steps.seconds);
  const double sim_mean = mean(sim_steps.seconds), ref_mean = mean(ref_steps.seconds);
  const double cycles = static_cast<double>(after.cycles - before.cycles);

  nlohmann::ordered_json j;
  j["benchmark"] = "train";
  j["model"] = a.model;
  j["batch"] = batch_size;
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
  cmd.add_option("--model", args->model, "zoo model, or gpt")->capture_default_str();
  cmd.add_option("--batch", args->batch, "samples per step (default 128; gpt 32)");
  cmd.add_option("--steps", args->steps, "timed steps (after one warm-up step)")
      ->capture_default_str();
  cli::add_config_flag(cmd, args->config);
  cli::add_seed_flag(cmd, args->seed, "parameter initialisation and the batches");
  cli::add_json_flag(cmd, args->json);
  cmd.callback([args] { bench_train(*args); });
}

}  // namespace tessera::bench
